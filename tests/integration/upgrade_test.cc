// The upgrade side of migration 0002 (physical queue identity, seed 000) against real
// PostgreSQL: a populated 0001 database (tests/upgrade/fixture_0001_populated.sql) is upgraded
// cleanly and then runs flows end to end; every incompatible state is rejected atomically
// (compared with a full pg_dump of schema and data); the read-only audit reports each problem;
// a fresh install and an upgrade end with the same schema; the optional pruning helper is
// upgraded; the migration's fence makes concurrent writers wait or fails with nothing changed;
// the startup matrix holds at SQL level; and concurrent definition calls stay consistent.
// Sections 9 and 10 upgrade the same fixture through 0004 (per-step queues) and 0005 (flow
// aliases: backfilled self-aliases, atomic refusal, bounded lock wait).
//
// Every test creates its own database(s). PostgreSQL missing is a failure, never a skip. No
// test asserts durations: concurrency tests wait for observable states (pg_blocking_pids) with
// bounded polls and assert the order of events.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <barrier>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <latch>
#include <optional>
#include <ostream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/migrate.h"
#include "pgflow/status.h"
#include "testing/command.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::CommandResult;
using pgflow::testing::IsOk;
using pgflow::testing::run_command;
using pgflow::testing::shell_quote;
using pgflow::testing::StatusIs;
using pgflow::testing::TestDatabase;
using ::testing::AllOf;
using ::testing::AnyOf;
using ::testing::Contains;
using ::testing::Eq;
using ::testing::Field;
using ::testing::HasSubstr;
using ::testing::Not;

// ---------------------------------------------------------------------------------------------
// Files, commands and dumps
// ---------------------------------------------------------------------------------------------

std::string read_source(const std::string& relative) {
  std::ifstream in(absl::StrCat(PGFLOW_SOURCE_DIR, "/", relative), std::ios::binary);
  EXPECT_TRUE(in.good()) << "cannot read " << relative;
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string source_path(const std::string& relative) {
  return absl::StrCat(PGFLOW_SOURCE_DIR, "/", relative);
}

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

// Drops only what differs between two dumps of the same database: the version header and
// pg_dump's per-run \restrict key.
std::string normalise_dump(const std::string& dump) {
  std::string out;
  for (const std::string& line : split_lines(dump)) {
    if (line.rfind("-- Dumped from database version", 0) == 0 ||
        line.rfind("-- Dumped by pg_dump version", 0) == 0 || line.rfind("\\restrict ", 0) == 0 ||
        line.rfind("\\unrestrict ", 0) == 0) {
      continue;
    }
    out += line;
    out += '\n';
  }
  return out;
}

// Where two texts first differ, with a little context (dumps are too long to print whole).
std::string first_difference(const std::string& a, const std::string& b) {
  std::vector<std::string> la = split_lines(a), lb = split_lines(b);
  size_t i = 0;
  while (i < la.size() && i < lb.size() && la[i] == lb[i]) ++i;
  std::string out = absl::StrCat("first difference at line ", i + 1, " (", la.size(), " vs ",
                                 lb.size(), " lines):\n");
  for (size_t k = i; k < i + 5; ++k) {
    if (k < la.size()) absl::StrAppend(&out, "  - ", la[k], "\n");
  }
  for (size_t k = i; k < i + 5; ++k) {
    if (k < lb.size()) absl::StrAppend(&out, "  + ", lb[k], "\n");
  }
  return out;
}

#define EXPECT_SAME_TEXT(a, b, what)                                         \
  do {                                                                       \
    const std::string& expect_same_a_ = (a);                                 \
    const std::string& expect_same_b_ = (b);                                 \
    EXPECT_TRUE(expect_same_a_ == expect_same_b_)                            \
        << what << ": " << first_difference(expect_same_a_, expect_same_b_); \
  } while (0)

enum class DumpKind {
  kEverything,    // schema and data of the whole database
  kPgflowSchema,  // schema of the pgflow schema only
};

std::string pg_dump(const std::string& url, DumpKind kind) {
  std::string command = absl::StrCat(
      PGFLOW_PG_BIN, "/pg_dump --no-owner --no-privileges ",
      kind == DumpKind::kPgflowSchema ? "--schema-only -n pgflow " : "", shell_quote(url));
  CommandResult r = run_command(command);
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  EXPECT_FALSE(r.out.empty()) << command;
  return normalise_dump(r.out);
}

// ---------------------------------------------------------------------------------------------
// The audit
// ---------------------------------------------------------------------------------------------

struct AuditRow {
  std::string severity, category, flow_slug, step_slug, detail, repair_hint;
  bool operator==(const AuditRow&) const = default;
};

std::ostream& operator<<(std::ostream& os, const AuditRow& r) {
  return os << "{" << r.severity << " " << r.category << " flow=" << r.flow_slug
            << " step=" << r.step_slug << " " << r.detail << "}";
}

// How psql runs the audit: as a plain session, or as on a hot standby, where every transaction
// is read-only (PGOPTIONS reaches the server as session settings).
enum class AuditSession { kReadWrite, kReadOnly };

constexpr char kReadOnlyEnv[] = "PGOPTIONS='-c default_transaction_read_only=on' ";

// Runs an audit (by default sql/audit/0002_queue_identity_audit.sql) with psql, as users are
// told to.
std::vector<AuditRow> run_audit(
    const std::string& url, AuditSession session = AuditSession::kReadWrite,
    const std::string& file = "sql/audit/0002_queue_identity_audit.sql") {
  std::string command = absl::StrCat(session == AuditSession::kReadOnly ? kReadOnlyEnv : "",
                                     PGFLOW_PG_BIN, "/psql -X -q -A -t -z -v ON_ERROR_STOP=1 -f ",
                                     shell_quote(source_path(file)), " ", shell_quote(url));
  CommandResult r = run_command(command);
  EXPECT_EQ(r.exit_code, 0) << command << "\n" << r.err;
  std::vector<AuditRow> rows;
  for (const std::string& line : split_lines(r.out)) {
    if (line.empty()) continue;
    std::vector<std::string> f;
    std::string field;
    for (char c : line) {
      if (c == '\0') {
        f.push_back(field);
        field.clear();
      } else {
        field += c;
      }
    }
    f.push_back(field);
    EXPECT_EQ(f.size(), 6u) << "unexpected audit line: " << line;
    if (f.size() != 6) continue;
    rows.push_back({f[0], f[1], f[2], f[3], f[4], f[5]});
  }
  return rows;
}

auto AuditError(const std::string& category, const std::string& flow_slug,
                const std::string& step_slug = "") {
  return AllOf(Field(&AuditRow::severity, Eq("error")), Field(&AuditRow::category, Eq(category)),
               Field(&AuditRow::flow_slug, Eq(flow_slug)),
               Field(&AuditRow::step_slug, Eq(step_slug)));
}

// ---------------------------------------------------------------------------------------------
// Flow shapes (the startup compilation contract)
// ---------------------------------------------------------------------------------------------

std::string step_shape(const std::string& slug, const std::vector<std::string>& deps = {},
                       const std::string& type = "single") {
  std::string d;
  for (const std::string& dep : deps) absl::StrAppend(&d, d.empty() ? "" : ",", "\"", dep, "\"");
  return absl::StrCat(R"({"slug":")", slug, R"(","stepType":")", type, R"(","dependencies":[)", d,
                      R"(],"whenUnmet":"skip","whenExhausted":"fail",)",
                      R"("requiredInputPattern":{"defined":false},)",
                      R"("forbiddenInputPattern":{"defined":false}})");
}

std::string flow_shape(const std::vector<std::string>& steps) {
  std::string s;
  for (const std::string& step : steps) absl::StrAppend(&s, s.empty() ? "" : ",", step);
  return absl::StrCat(R"({"steps":[)", s, "]}");
}

// The shapes of the fixture's flows, as a new worker would send them.
std::string greet_shape() {
  return flow_shape({step_shape("hello"), step_shape("bye", {"hello"})});
}
std::string fanout_shape() {
  return flow_shape({step_shape("each", {}, "map"), step_shape("total", {"each"})});
}
std::string fragile_shape() { return flow_shape({step_shape("boom"), step_shape("sibling")}); }
std::string order_shape() {
  return flow_shape({step_shape("validate"), step_shape("charge", {"validate"})});
}

constexpr char kRunA1[] = "00000000-0000-0000-0000-0000000000a1";  // greet, completed
constexpr char kRunA2[] = "00000000-0000-0000-0000-0000000000a2";  // greet, hello without message
constexpr char kRunB1[] = "00000000-0000-0000-0000-0000000000b1";  // fanout, in flight
constexpr char kRunC1[] = "00000000-0000-0000-0000-0000000000c1";  // fragile, failed
constexpr char kRunD1[] = "00000000-0000-0000-0000-0000000000d1";  // orderFlow, completed
constexpr char kRunD2[] = "00000000-0000-0000-0000-0000000000d2";  // orderFlow, in flight

int latest_version() { return bundled_migrations().back().version; }

// ---------------------------------------------------------------------------------------------
// The fixture
// ---------------------------------------------------------------------------------------------

class Upgrade0002 : public ::testing::Test {
 protected:
  // A new database migrated to `version` (nullopt: the latest), with conn_ open on it.
  void create_database(std::optional<int> version) {
    auto db = TestDatabase::empty();
    ASSERT_TRUE(db.ok()) << db.status();
    db_.emplace(std::move(*db));
    MigrateOptions options;
    options.target_version = version;
    ASSERT_THAT(migrate(db_->url(), options), IsOk());
    auto conn = pg::Connection::open(db_->url(), "upgrade-test");
    ASSERT_TRUE(conn.ok()) << conn.status();
    conn_.emplace(std::move(*conn));
  }

  // A schema-version-1 database holding the populated upgrade fixture.
  void populated_0001() {
    ASSERT_NO_FATAL_FAILURE(create_database(1));
    ASSERT_EQ(schema_version(), 1);
    ASSERT_THAT(conn_->exec_script(read_source("tests/upgrade/fixture_0001_populated.sql")),
                IsOk());
  }

  const std::string& url() const { return db_->url(); }

  absl::StatusOr<pg::Result> exec(const std::string& sql, const std::vector<pg::Param>& p = {}) {
    return conn_->exec(sql, p);
  }

  std::string scalar(const std::string& sql, const std::vector<pg::Param>& p = {}) {
    auto r = exec(sql, p);
    EXPECT_TRUE(r.ok()) << r.status() << " in " << sql;
    return r.ok() && r->rows() > 0 ? std::string(r->scalar()) : std::string("<no row>");
  }

  std::string count(const std::string& sql, const std::vector<pg::Param>& p = {}) {
    return scalar(absl::StrCat("select count(*) from (", sql, ") x"), p);
  }

  int schema_version() {
    auto s = schema_status(url());
    EXPECT_TRUE(s.ok()) << s.status();
    return s.ok() && !s->applied.empty() ? s->applied.back().migration.version : 0;
  }

  std::string dump(DumpKind kind = DumpKind::kEverything) { return pg_dump(url(), kind); }
  std::vector<AuditRow> audit(AuditSession session = AuditSession::kReadWrite) {
    return run_audit(url(), session);
  }

  // Registers a worker of the database's protocol for `flow` on its canonical queue.
  void register_worker(const std::string& worker_id, const std::string& flow) {
    ASSERT_THAT(
        exec("select pgflow.register_worker($1::uuid, $2, $3, lower($3), pgflow.worker_protocol())",
             {worker_id, absl::StrCat(flow, "_v2_worker"), flow}),
        IsOk());
  }

  // Works a queue the way a worker does, through the SQL API: read the visible messages of
  // `read_queue` (the worker's subscription spelling), claim them with claim_tasks(queue, flow,
  // ids, worker) and complete every claimed task; until a read returns nothing (at most 50
  // rounds). Returns the number of tasks completed; no message may be fatal.
  int work(const std::string& queue, const std::string& flow, const std::string& worker_id) {
    int completed = 0;
    for (int round = 0; round < 50; ++round) {
      std::string ids = scalar(
          "select coalesce(array_agg(msg_id order by msg_id), '{}')::text "
          "from pgmq.read($1, 30, 50)",
          {queue});
      if (ids == "{}") return completed;
      auto claims = exec(
          "select outcome, run_id::text, step_slug, task_index::text, coalesce(reason, '') "
          "from pgflow.claim_tasks($1, $2, $3::bigint[], $4::uuid)",
          {queue, flow, ids, worker_id});
      EXPECT_TRUE(claims.ok()) << claims.status();
      if (!claims.ok()) return completed;
      for (int i = 0; i < claims->rows(); ++i) {
        std::string outcome(claims->text(i, 0));
        EXPECT_THAT(outcome, AnyOf("claimed", "archived", "deferred"))
            << "message of " << flow << ": " << claims->text(i, 4);
        if (outcome != "claimed") continue;
        auto done = exec(
            "select count(*) from pgflow.complete_task($1::uuid, $2, $3::int, "
            "jsonb_build_object('step', $2::text, 'index', $3::int))",
            {std::string(claims->text(i, 1)), std::string(claims->text(i, 2)),
             std::string(claims->text(i, 3))});
        EXPECT_TRUE(done.ok()) << done.status();
        if (done.ok() && done->scalar() == "1") ++completed;
      }
    }
    ADD_FAILURE() << "queue " << queue << " did not drain";
    return completed;
  }

  // Finishes the fixture's in-flight fanout run with a new worker: each[0], started by a worker
  // that is gone, stalls; stall recovery makes its message visible again in the task's own
  // queue, and the new worker takes it with the other tasks (each[0..2], then total).
  void finish_in_flight_fanout(const std::string& worker) {
    ASSERT_NO_FATAL_FAILURE(register_worker(worker, "fanout"));
    ASSERT_THAT(exec("update pgflow.step_tasks set queued_at = queued_at - interval '10 minutes', "
                     "started_at = started_at - interval '10 minutes' "
                     "where run_id = $1::uuid and status = 'started'",
                     {kRunB1}),
                IsOk());
    EXPECT_EQ(scalar("select pgflow.requeue_stalled_tasks()::text"), "1");
    EXPECT_EQ(work("fanout", "fanout", worker), 4);
    EXPECT_EQ(run_status(kRunB1), "completed");
  }

  std::string run_status(const std::string& run_id) {
    return scalar("select status from pgflow.runs where run_id = $1::uuid", {run_id});
  }

  std::string start_flow(const std::string& flow, const std::string& input) {
    return scalar("select run_id::text from pgflow.start_flow($1, $2::jsonb)", {flow, input});
  }

  std::optional<TestDatabase> db_;
  std::optional<pg::Connection> conn_;
};

// Polls (bounded) until backend `pid` waits for a lock that `blocker_pid` holds.
bool wait_until_blocked(pg::Connection& observer, int pid, int blocker_pid) {
  for (int i = 0; i < 1500; ++i) {
    auto r = observer.exec("select $2::int = any(pg_blocking_pids($1::int))",
                           {std::to_string(pid), std::to_string(blocker_pid)});
    if (r.ok() && r->scalar() == "t") return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

// Polls (bounded) for the backend of this database with `application_name`; 0 if none.
int wait_for_backend(pg::Connection& observer, const std::string& application_name) {
  for (int i = 0; i < 1500; ++i) {
    auto r = observer.exec(
        "select pid from pg_stat_activity where datname = current_database() "
        "and application_name = $1",
        {application_name});
    if (r.ok() && r->rows() == 1) return std::stoi(std::string(r->scalar()));
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return 0;
}

// =============================================================================================
// 1. A clean upgrade of a populated 0001 database
// =============================================================================================

TEST_F(Upgrade0002, BackfillsQueueNameOnEveryStepAndTaskIncludingNullMessageIds) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  const std::string tasks_sql =
      "select string_agg((to_jsonb(t) - 'queue_name' - 'last_claim_id' - 'gate' - "
      "'priority' - 'concurrency_key' - 'key_weight' - 'wake_at')::text, "
      "e'\\n' "
      "order by run_id, step_slug, task_index) from pgflow.step_tasks t";
  const std::string runs_sql =
      "select string_agg(to_jsonb(r)::text, e'\\n' order by run_id) from pgflow.runs r";
  const std::string tasks_before = scalar(tasks_sql);
  const std::string runs_before = scalar(runs_sql);

  ASSERT_THAT(migrate(url()), IsOk());
  EXPECT_EQ(schema_version(), latest_version());

  EXPECT_EQ(count("select 1 from pgflow.steps"), "8");
  EXPECT_EQ(count("select 1 from pgflow.steps where queue_name is distinct from lower(flow_slug)"),
            "0");
  EXPECT_EQ(count("select 1 from pgflow.step_tasks"), "11");
  EXPECT_EQ(
      count("select 1 from pgflow.step_tasks where queue_name is distinct from lower(flow_slug)"),
      "0");
  // The two tasks without a queue message got their queue identity too.
  EXPECT_EQ(scalar("select string_agg(format('%s/%s/%s', run_id, step_slug, queue_name), ' ' "
                   "order by run_id) from pgflow.step_tasks where message_id is null"),
            absl::StrCat(kRunA1, "/hello/greet ", kRunA2, "/hello/greet"));
  // The camelCase flow keeps its spelling; its queue identity is lower-case.
  EXPECT_EQ(scalar("select string_agg(distinct queue_name, ',') from pgflow.steps "
                   "where flow_slug = 'orderFlow'"),
            "orderflow");
  // Message ids are queue-scoped: id 1 exists in three queues, one task each.
  EXPECT_EQ(scalar("select string_agg(queue_name, ',' order by queue_name) from pgflow.step_tasks "
                   "where message_id = 1"),
            "fanout,fragile,orderflow");
  // Nothing else changed: tasks (but for the new column), runs and the pgmq.meta spellings.
  EXPECT_EQ(scalar(tasks_sql), tasks_before);
  // (0008's run control columns come on top, all NULL: section 13 checks them.)
  EXPECT_EQ(scalar("select string_agg((to_jsonb(r) - 'cancelled_at' - 'cancel_reason' - "
                   "'restart_of_run_id')::text, "
                   "e'\\n' order by run_id) from pgflow.runs r"),
            runs_before);
  EXPECT_EQ(scalar("select string_agg(queue_name, ',' order by queue_name) from pgmq.meta"),
            "fanout,fragile,greet,orderFlow");
  // 0.16.0 worker rows are marked as protocol 1 (they can never claim with protocol 2).
  EXPECT_EQ(scalar("select string_agg(distinct protocol::text, ',') from pgflow.workers"), "1");
}

TEST_F(Upgrade0002, UpgradedFlowsVerifyAtStartupAndRunNewRunsEndToEnd) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(migrate(url()), IsOk());

  struct Case {
    std::string flow, shape, input, worker;
  };
  const std::vector<Case> cases = {
      {"greet", greet_shape(), R"({"name": "Cy"})", "aaaaaaaa-0000-0000-0000-000000000001"},
      {"fanout", fanout_shape(), "[1, 2, 3, 4]", "aaaaaaaa-0000-0000-0000-000000000002"},
      {"fragile", fragile_shape(), "{}", "aaaaaaaa-0000-0000-0000-000000000003"},
      {"orderFlow", order_shape(), R"({"order": 3})", "aaaaaaaa-0000-0000-0000-000000000004"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.flow);
    // A new worker's startup: the upgraded definition verifies (its queue is owned).
    // Upgraded flows are plain flows (queue mode flow), active versions of their self-aliases,
    // and verify as they are.
    EXPECT_EQ(nlohmann::json::parse(scalar("select (pgflow.ensure_flow_compiled($1, $2::jsonb, "
                                           "pgflow.worker_protocol()) - 'routes')::text",
                                           {c.flow, c.shape})),
              nlohmann::json({{"status", "verified"},
                              {"queue_mode", "flow"},
                              {"queue_name", absl::AsciiStrToLower(c.flow)},
                              {"differences", nlohmann::json::array()},
                              {"mismatchKind", nullptr},
                              {"flow_alias", c.flow},
                              {"flow_control", nlohmann::json::object()},
                              {"activation", "active"},
                              {"active_flow_slug", c.flow}}));
    ASSERT_NO_FATAL_FAILURE(register_worker(c.worker, c.flow));
    std::string run_id = start_flow(c.flow, c.input);
    EXPECT_EQ(count("select 1 from pgflow.step_tasks where run_id = $1::uuid "
                    "and queue_name <> lower(flow_slug)",
                    {run_id}),
              "0");
    work(absl::AsciiStrToLower(c.flow), c.flow, c.worker);
    EXPECT_EQ(run_status(run_id), "completed");
  }
  // The fan-out's map produced one task per element.
  EXPECT_EQ(
      count("select 1 from pgflow.step_tasks t join pgflow.runs r using (run_id) "
            "where r.flow_slug = 'fanout' and r.input = '[1, 2, 3, 4]' and t.step_slug = 'each' "
            "and t.status = 'completed'"),
      "4");
  // Nothing is left in any queue but what belongs to pre-upgrade runs still in flight
  // (fanout b1's started map task, hidden until its deadline).
  EXPECT_EQ(count("select 1 from pgmq.q_greet"), "0");
  EXPECT_EQ(count("select 1 from pgmq.q_fragile"), "0");
  EXPECT_EQ(count("select 1 from pgmq.q_orderflow"), "0");
  EXPECT_EQ(count("select 1 from pgmq.q_fanout"), "1");
}

TEST_F(Upgrade0002, InFlightRunStartedBefore0002FinishesAfterTheUpgrade) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(migrate(url()), IsOk());
  const std::string worker = "aaaaaaaa-0000-0000-0000-0000000000b1";
  // each[0] was started by a 0.16.0 worker that the upgrade fence stopped.
  ASSERT_NO_FATAL_FAILURE(finish_in_flight_fanout(worker));
  EXPECT_EQ(scalar("select attempts_count::text from pgflow.step_tasks "
                   "where run_id = $1::uuid and step_slug = 'each' and task_index = 0",
                   {kRunB1}),
            "2");
  EXPECT_EQ(scalar("select jsonb_array_length(output)::text from pgflow.step_states "
                   "where run_id = $1::uuid and step_slug = 'each'",
                   {kRunB1}),
            "3");
  // Runs that had finished stay as they were; the message-less task stays queued.
  EXPECT_EQ(run_status(kRunA1), "completed");
  EXPECT_EQ(run_status(kRunC1), "failed");
  EXPECT_EQ(scalar("select status from pgflow.step_tasks where run_id = $1::uuid", {kRunA2}),
            "queued");
}

TEST_F(Upgrade0002, CamelCaseQueueIsArchivedIntoDroppedAndRecreatedByItsExactMetaSpelling) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(migrate(url()), IsOk());
  const std::string meta_sql =
      "select coalesce(string_agg(queue_name, ',' order by queue_name), '') from pgmq.meta "
      "where lower(queue_name) = 'orderflow'";
  const std::string objects_sql =
      "select format('%s %s %s', to_regclass('pgmq.q_orderflow'), to_regclass('pgmq.a_orderflow'), "
      "to_regclass('pgmq.q_orderflow_msg_id_seq'))";
  const std::string all_objects = "pgmq.q_orderflow pgmq.a_orderflow pgmq.q_orderflow_msg_id_seq";

  // Stage 1: after the upgrade the meta row keeps its 0.16.0 spelling; tables are lower-case.
  EXPECT_EQ(scalar(meta_sql), "orderFlow");
  EXPECT_EQ(scalar(objects_sql), all_objects);
  EXPECT_EQ(count("select 1 from pgmq.a_orderflow"), "2");
  EXPECT_EQ(count("select 1 from pgmq.q_orderflow"), "1");

  // Stage 2: archive into it. Run d2 finishes through claim_tasks; the first round is read and
  // claimed with the mixed-case spelling, which reaches the same tables.
  const std::string worker = "aaaaaaaa-0000-0000-0000-0000000000d2";
  ASSERT_NO_FATAL_FAILURE(register_worker(worker, "orderFlow"));
  std::string ids = scalar("select array_agg(msg_id)::text from pgmq.read('orderFlow', 30, 10)");
  EXPECT_EQ(ids, "{3}");
  EXPECT_EQ(scalar("select string_agg(outcome || ':' || queue_name || ':' || step_slug, ',') "
                   "from pgflow.claim_tasks('orderFlow', 'orderFlow', $1::bigint[], $2::uuid)",
                   {ids, worker}),
            "claimed:orderflow:validate");
  EXPECT_THAT(
      exec("select pgflow.complete_task($1::uuid, 'validate', 0, '{\"ok\": true}')", {kRunD2}),
      IsOk());
  EXPECT_EQ(work("orderflow", "orderFlow", worker), 1);  // charge
  EXPECT_EQ(run_status(kRunD2), "completed");
  EXPECT_EQ(count("select 1 from pgmq.a_orderflow"), "4");
  EXPECT_EQ(count("select 1 from pgmq.q_orderflow"), "0");
  EXPECT_EQ(scalar(meta_sql), "orderFlow");

  // Stage 3: drop. delete_flow_and_data resolves the exact spelling "orderFlow" from pgmq.meta.
  ASSERT_THAT(exec("select pgflow.delete_flow_and_data('orderFlow')"), IsOk());
  EXPECT_EQ(scalar(meta_sql), "");
  EXPECT_EQ(scalar(objects_sql), "  ");
  EXPECT_EQ(count("select 1 from pgflow.flows where lower(flow_slug) = 'orderflow'"), "0");
  EXPECT_EQ(count("select 1 from pgflow.steps where flow_slug = 'orderFlow'"), "0");
  EXPECT_EQ(count("select 1 from pgflow.runs where flow_slug = 'orderFlow'"), "0");
  EXPECT_EQ(count("select 1 from pgflow.step_tasks where queue_name = 'orderflow'"), "0");
  // Other flows' queues are untouched.
  EXPECT_EQ(scalar("select string_agg(queue_name, ',' order by queue_name) from pgmq.meta"),
            "fanout,fragile,greet");

  // Stage 4: recreate. The startup compiler provisions the queue under the canonical name.
  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('orderFlow', $1::jsonb, "
                   "pgflow.worker_protocol())->>'status'",
                   {order_shape()}),
            "compiled");
  EXPECT_EQ(scalar(meta_sql), "orderflow");
  EXPECT_EQ(scalar(objects_sql), all_objects);
  EXPECT_EQ(count("select 1 from pgmq.a_orderflow"), "0");
  EXPECT_EQ(scalar("select string_agg(distinct queue_name, ',') from pgflow.steps "
                   "where flow_slug = 'orderFlow'"),
            "orderflow");
  std::string run_id = start_flow("orderFlow", R"({"order": 4})");
  EXPECT_EQ(work("orderflow", "orderFlow", worker), 2);
  EXPECT_EQ(run_status(run_id), "completed");
  EXPECT_EQ(count("select 1 from pgmq.a_orderflow"), "2");
  // And it can be dropped again (now under its lower-case spelling).
  ASSERT_THAT(exec("select pgflow.delete_flow_and_data('orderFlow')"), IsOk());
  EXPECT_EQ(scalar(meta_sql), "");
  EXPECT_EQ(scalar(objects_sql), "  ");
}

// =============================================================================================
// 2 + 3. Atomic rejection, with the read-only audit reporting the same problem first
// =============================================================================================

struct Problem {
  std::string sql;                   // applied on top of the populated fixture
  std::string category;              // the audit category (also tagged in the migration error)
  std::string flow_slug;             // exact
  std::string step_slug;             // exact, or empty
  std::vector<std::string> message;  // each appears in the migration's error
};

// How many problems a refusal of 0002 lists (one "  - [category] ..." line each).
size_t listed_problems(const std::string& refusal) {
  size_t n = 0;
  for (size_t at = refusal.find("\n  - ["); at != std::string::npos;
       at = refusal.find("\n  - [", at + 1)) {
    ++n;
  }
  return n;
}

class Upgrade0002Rejection : public Upgrade0002 {
 protected:
  // The audit reports the problem (exact slugs) and changes nothing, in a read-only session
  // too; the migration refuses, listing exactly the audit's errors word for word (the audit is
  // a separate, read-only copy of the migration's preflight: this is what keeps them in
  // agreement), and changes nothing either: a full dump of schema and data is the same before
  // the audit, after it, and after the failed migration.
  void expect_rejected_atomically(const Problem& p) {
    ASSERT_NO_FATAL_FAILURE(populated_0001());
    ASSERT_THAT(conn_->exec_script(p.sql), IsOk());
    const std::string before = dump();
    ASSERT_FALSE(before.empty());

    std::vector<AuditRow> report = audit();
    EXPECT_THAT(report, Contains(AuditError(p.category, p.flow_slug, p.step_slug)));
    std::vector<AuditRow> errors;
    for (const AuditRow& row : report) {
      if (row.severity == "error") {
        EXPECT_FALSE(row.flow_slug.empty()) << row;
        EXPECT_FALSE(row.repair_hint.empty()) << row;
        errors.push_back(row);
      }
    }
    EXPECT_EQ(audit(AuditSession::kReadOnly), report) << "the audit in a read-only session";
    EXPECT_SAME_TEXT(before, dump(), "the audit changed the database");

    absl::Status s = migrate(url());
    EXPECT_THAT(s, StatusIs(AnyOf(absl::StatusCode::kInvalidArgument,
                                  absl::StatusCode::kFailedPrecondition),
                            AllOf(HasSubstr("0002_queue_identity.sql"),
                                  HasSubstr(absl::StrCat("[", p.category, "]")),
                                  HasSubstr("Nothing was changed"))));
    EXPECT_EQ(sql_state(s), "23514");
    for (const std::string& m : p.message) EXPECT_THAT(std::string(s.message()), HasSubstr(m));
    for (const AuditRow& e : errors) {
      EXPECT_THAT(std::string(s.message()),
                  HasSubstr(absl::StrCat("\n  - [", e.category, "] ", e.detail, " -> ",
                                         e.repair_hint, "\n")))
          << "the migration does not list the audit's " << e;
    }
    EXPECT_EQ(listed_problems(std::string(s.message())), errors.size())
        << "the migration lists other problems than the audit:\n"
        << s.message();
    EXPECT_EQ(schema_version(), 1);
    EXPECT_SAME_TEXT(before, dump(), "the failed migration changed the database");
  }
};

TEST_F(Upgrade0002Rejection, RejectsLeadingUnderscoreFlowSlugAndChangesNothing) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('_hidden'); select pgflow.add_step('_hidden', 'work');"
       "select pgflow.start_flow('_hidden', '{}');",
       "invalid_flow_slug",
       "_hidden",
       "",
       {R"(flow slug "_hidden" starts with an underscore)"}});
}

TEST_F(Upgrade0002Rejection, RejectsTrailingUnderscoreStepSlugAndChangesNothing) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('shipping'); select pgflow.add_step('shipping', 'pack_');"
       "select pgflow.start_flow('shipping', '{}');",
       "invalid_step_slug",
       "shipping",
       "pack_",
       {R"(step slug "pack_" of flow "shipping" ends with an underscore)"}});
}

TEST_F(Upgrade0002Rejection, RejectsDoubleUnderscoreInsideFlowSlugAndChangesNothing) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('billing__v2'); select pgflow.add_step('billing__v2', 'charge');"
       "select pgflow.start_flow('billing__v2', '{}');",
       "invalid_flow_slug",
       "billing__v2",
       "",
       {R"(flow slug "billing__v2" contains a double underscore)"}});
}

TEST_F(Upgrade0002Rejection, RejectsCaseOnlyDuplicateFlowsAndChangesNothing) {
  // In 0001 "Orders" and "orders" share the tables pgmq.q_orders/a_orders and have two
  // pgmq.meta rows.
  expect_rejected_atomically(
      {"select pgflow.create_flow('Orders'); select pgflow.add_step('Orders', 'pick');"
       "select pgflow.create_flow('orders'); select pgflow.add_step('orders', 'pick');"
       "select pgflow.start_flow('Orders', '{}'); select pgflow.start_flow('orders', '{}');",
       "case_conflict_flow",
       "Orders",
       "",
       {R"(flow slug "Orders" differs only in case from "orders")",
        R"(flow slug "orders" differs only in case from "Orders")",
        R"([queue_ambiguous] pgmq.meta has 2 rows for the same tables of queue "orders")"}});
  EXPECT_THAT(audit(), Contains(AuditError("case_conflict_flow", "orders")));
}

TEST_F(Upgrade0002Rejection, RejectsCaseOnlyDuplicateStepsWithinAFlowAndChangesNothing) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('report'); select pgflow.add_step('report', 'Fetch');"
       "select pgflow.add_step('report', 'fetch'); select pgflow.start_flow('report', '{}');",
       "case_conflict_step",
       "report",
       "Fetch",
       {R"(step slug "Fetch" differs only in case from "fetch" in flow "report")",
        R"(step slug "fetch" differs only in case from "Fetch" in flow "report")"}});
  EXPECT_THAT(audit(), Contains(AuditError("case_conflict_step", "report", "fetch")));
}

TEST_F(Upgrade0002Rejection, RejectsInvalidSlugOfAFlowWithoutRunsAndChangesNothing) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('legacy_'); select pgflow.add_step('legacy_', 'work');",
       "invalid_flow_slug",
       "legacy_",
       "",
       {R"(flow slug "legacy_" ends with an underscore)"}});
  EXPECT_EQ(count("select 1 from pgflow.runs where flow_slug = 'legacy_'"), "0");
}

TEST_F(Upgrade0002Rejection, RejectsDuplicateQueueMessageIdentityAndChangesNothing) {
  // fragile c1's boom now claims the message id of its sibling (both in queue "fragile").
  expect_rejected_atomically(
      {absl::StrCat("update pgflow.step_tasks set message_id = (select message_id from "
                    "pgflow.step_tasks where run_id = '",
                    kRunC1,
                    "' and step_slug = 'sibling') "
                    "where run_id = '",
                    kRunC1, "' and step_slug = 'boom';"),
       "duplicate_message_identity",
       "fragile",
       "",
       {R"(1 message id(s) of queue "fragile" of flow "fragile" are shared by several tasks (e.g. msg_id 2))"}});
}

TEST_F(Upgrade0002Rejection, RejectsActiveMessageWithoutTaskAndChangesNothing) {
  // A pgflow-shaped message no task has (greet's next message id is 4).
  expect_rejected_atomically(
      {R"(select pgmq.send('greet', '{"flow_slug": "greet", "run_id": "00000000-0000-0000-0000-0000000000ff", "step_slug": "hello", "task_index": 0}');)",
       "unmatched_active_message",
       "greet",
       "",
       {R"(1 active message(s) in queue "greet" of flow "greet" match no task (e.g. msg_id 4))"}});
}

TEST_F(Upgrade0002Rejection, RejectsMissingQueueAndChangesNothing) {
  expect_rejected_atomically({"delete from pgmq.meta where queue_name = 'fanout';",
                              "queue_missing",
                              "fanout",
                              "",
                              {R"(flow "fanout" has no PGMQ queue "fanout" in pgmq.meta)"}});
}

// Drops pgmq.a_fragile in either PGMQ mode: with the pgmq extension a queue's tables are
// members of the extension, which refuses to drop a member (an archive has no sequence).
constexpr char kDropFragileArchive[] = R"sql(
do $$ begin
  if exists (select 1 from pg_depend d where d.classid = 'pg_class'::regclass
             and d.objid = 'pgmq.a_fragile'::regclass and d.deptype = 'e') then
    alter extension pgmq drop table pgmq.a_fragile;
  end if;
end $$;
drop table pgmq.a_fragile;
)sql";

TEST_F(Upgrade0002Rejection, RejectsMissingArchiveTableAndChangesNothing) {
  expect_rejected_atomically(
      {kDropFragileArchive,
       "queue_malformed",
       "fragile",
       "",
       {R"(of flow "fragile" lacks table pgmq.q_fragile or pgmq.a_fragile)"}});
}

TEST_F(Upgrade0002Rejection, RejectsMixedCaseAliasMetaRowsAndChangesNothing) {
  // A second spelling of the camelCase queue: two pgmq.meta rows for one pair of tables.
  expect_rejected_atomically(
      {"select pgmq.create('OrderFlow');",
       "queue_ambiguous",
       "orderFlow",
       "",
       {R"(pgmq.meta has 2 rows for the same tables of queue "orderflow" of flow "orderFlow": "OrderFlow", "orderFlow")"}});
}

TEST_F(Upgrade0002Rejection, RejectsFlowSlugTooLongForAQueueNameAndChangesNothing) {
  // 0001 accepts flow slugs up to 128 characters but PGMQ refuses queue names over 47, so such a
  // flow exists only without its queue (here written directly, as an older PGMQ or a hand-made
  // definition would leave it).
  expect_rejected_atomically(
      {"insert into pgflow.flows (flow_slug) values "
       "('nightly_invoice_reconciliation_across_regions_v2');",
       "flow_queue_name_too_long",
       "nightly_invoice_reconciliation_across_regions_v2",
       "",
       {R"(queue name "nightly_invoice_reconciliation_across_regions_v2" would be 48 characters; PGMQ allows 47)",
        R"([queue_missing] flow "nightly_invoice_reconciliation_across_regions_v2" has no PGMQ queue)"}});
}

TEST_F(Upgrade0002Rejection, ListsEveryProblemAtOnce) {
  expect_rejected_atomically(
      {"select pgflow.create_flow('_hidden'); select pgflow.add_step('_hidden', 'work');"
       "select pgflow.create_flow('shipping'); select pgflow.add_step('shipping', 'pack_');"
       "select pgmq.send('greet', '{}'); delete from pgmq.meta where queue_name = 'fanout';",
       "invalid_flow_slug",
       "_hidden",
       "",
       {"[invalid_step_slug]", "[unmatched_active_message]", "[queue_missing]"}});
}

// =============================================================================================
// 3. The audit
// =============================================================================================

// The "severity, category" pairs a report can produce: every `'<severity>', '<category>'` pair
// of literals in `sql` (both the migration's preflight and the audit write their rows so).
std::set<std::string> report_categories(const std::string& sql) {
  static const std::regex kRow(R"('(error|action|info)',\s*'([a-z_]+)')");
  std::set<std::string> found;
  for (auto it = std::sregex_iterator(sql.begin(), sql.end(), kRow); it != std::sregex_iterator();
       ++it) {
    found.insert(absl::StrCat((*it)[1].str(), " ", (*it)[2].str()));
  }
  return found;
}

// The [migration-only: preflight] section of 0002.
std::string migration_preflight() {
  const std::string migration = read_source("sql/migrations/0002_queue_identity.sql");
  const std::string begin = "-- [migration-only: preflight]\n", end = "-- [end migration-only]\n";
  size_t b = migration.find(begin);
  size_t e = b == std::string::npos ? b : migration.find(end, b);
  EXPECT_NE(e, std::string::npos) << "no preflight section in 0002";
  return e == std::string::npos ? "" : migration.substr(b, e - b);
}

// The released migration's preflight and the audit are two copies of the same checks (the audit
// is read-only SQL, the preflight a temporary function): the audit reports every category the
// preflight can raise, and no other. Their wording is compared row by row in the rejection
// tests above, which run every category through both.
TEST(Upgrade0002Files, AuditReportsExactlyTheCategoriesOfTheMigrationsPreflight) {
  const std::set<std::string> in_migration = report_categories(migration_preflight());
  const std::set<std::string> in_audit =
      report_categories(read_source("sql/audit/0002_queue_identity_audit.sql"));
  EXPECT_THAT(in_migration, Contains("error invalid_flow_slug"));
  EXPECT_EQ(in_migration.size(), 12u) << ::testing::PrintToString(in_migration);  // 10 errors
  EXPECT_EQ(in_audit, in_migration);
}

// Every error the preflight can raise is the category of one of the rejection scenarios above
// (read from this file: the category follows the scenario's SQL in each call of
// expect_rejected_atomically).
TEST(Upgrade0002Files, EveryErrorOfTheMigrationsPreflightHasARejectionScenario) {
  const std::string tests = read_source("tests/integration/upgrade_test.cc");
  static const std::regex kCall(R"(expect_rejected_atomically\(\s*\{)");
  std::vector<std::string> scenarios;
  for (auto it = std::sregex_iterator(tests.begin(), tests.end(), kCall);
       it != std::sregex_iterator(); ++it) {
    size_t b = static_cast<size_t>(it->position());
    size_t e = tests.find("});", b);
    if (e != std::string::npos) scenarios.push_back(tests.substr(b, e - b));
  }
  EXPECT_GE(scenarios.size(), 10u);
  for (const std::string& category : report_categories(migration_preflight())) {
    if (category.rfind("error ", 0) != 0) continue;
    const std::string quoted = absl::StrCat("\"", category.substr(6), "\"");
    EXPECT_TRUE(
        std::any_of(scenarios.begin(), scenarios.end(),
                    [&](const std::string& s) { return s.find(quoted) != std::string::npos; }))
        << "no Upgrade0002Rejection scenario for " << quoted;
  }
}

TEST_F(Upgrade0002, AuditOfACleanDatabaseIsReadOnlyAndReportsOnlyTheBackfill) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  const std::string before = dump();
  std::vector<AuditRow> report = audit();
  ASSERT_EQ(report.size(), 1u) << ::testing::PrintToString(report);
  EXPECT_EQ(report[0].severity, "info");
  EXPECT_EQ(report[0].category, "backfill");
  EXPECT_EQ(
      report[0].detail,
      "8 step(s) and 11 task(s) (2 without a queue message) get queue_name = lower(flow_slug)");
  EXPECT_EQ(audit(AuditSession::kReadOnly), report) << "the audit in a read-only session";
  EXPECT_SAME_TEXT(before, dump(), "the audit changed the database");
}

TEST_F(Upgrade0002, AuditReportsLargeMessageProblemsAsExactCountsWithAtMostFiveSamples) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(exec("select pgmq.send('greet', jsonb_build_object('n', i)) "
                   "from generate_series(1, 12) i"),
              IsOk());
  const std::string before = dump();
  EXPECT_THAT(
      audit(),
      Contains(AllOf(
          AuditError("unmatched_active_message", "greet"),
          Field(
              &AuditRow::detail,
              Eq(R"(12 active message(s) in queue "greet" of flow "greet" match no task (e.g. msg_id 4, 5, 6, 7, 8))")))));
  EXPECT_SAME_TEXT(before, dump(), "the audit changed the database");
}

// A hot standby (or a careful operator's read-only transaction) runs every transaction read-only:
// the audit is one plain SELECT and reports the same rows there. The database has a problem of
// every category, so every part of the report is read (including each queue's messages).
TEST_F(Upgrade0002, AuditInAReadOnlySessionReportsTheSameRows) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(conn_->exec_script(read_source("tests/upgrade/prune_data_older_than.0001.sql")),
              IsOk());
  ASSERT_THAT(
      conn_->exec_script(absl::StrCat(
          "select pgflow.create_flow('_hidden'); select pgflow.add_step('_hidden', 'work');"
          "select pgflow.create_flow('shipping'); select pgflow.add_step('shipping', 'pack_');"
          "select pgflow.create_flow('Orders'); select pgflow.create_flow('orders');"
          "select pgflow.create_flow('report'); select pgflow.add_step('report', 'Fetch');"
          "select pgflow.add_step('report', 'fetch');"
          "update pgflow.step_tasks set message_id = (select message_id from "
          "pgflow.step_tasks where run_id = '",
          kRunC1,
          "' and step_slug = 'sibling') "
          "where run_id = '",
          kRunC1,
          "' and step_slug = 'boom';"
          "select pgmq.send('greet', '{}'); delete from pgmq.meta where queue_name = 'fanout';",
          kDropFragileArchive,
          "select pgmq.create('OrderFlow');"
          "insert into pgflow.flows (flow_slug) "
          "values ('nightly_invoice_reconciliation_across_regions_v2');")),
      IsOk());
  const std::string before = dump();

  // The setting really reaches the audit's session: it refuses what the old audit did first.
  CommandResult create = run_command(absl::StrCat(
      kReadOnlyEnv, PGFLOW_PG_BIN, "/psql -X -q -v ON_ERROR_STOP=1 -c ",
      shell_quote("create function pg_temp.f() returns int language sql as 'select 1'"), " ",
      shell_quote(url())));
  EXPECT_NE(create.exit_code, 0);
  EXPECT_THAT(create.err, HasSubstr("cannot execute CREATE FUNCTION in a read-only transaction"));

  const std::vector<AuditRow> read_write = audit();
  std::set<std::string> categories;
  for (const AuditRow& row : read_write)
    categories.insert(absl::StrCat(row.severity, " ", row.category));
  EXPECT_EQ(categories, report_categories(migration_preflight()))
      << ::testing::PrintToString(read_write);
  EXPECT_EQ(audit(AuditSession::kReadOnly), read_write);
  EXPECT_SAME_TEXT(before, dump(), "the audit changed the database");
}

// =============================================================================================
// 4. Schema equivalence (the stand-in for a schema-diff tool)
// =============================================================================================

// 0002 without its [migration-only] parts: sections from a line "-- [migration-only: <what>]"
// through the line "-- [end migration-only]", and single statements whose line ends with
// "-- [migration-only: <what>]". Fails the test when the markers are unbalanced.
std::string strip_migration_only(const std::string& migration, int* sections, int* statements) {
  static const std::regex kOpen(R"(^-- \[migration-only: [a-z -]+\]$)");
  static const std::regex kClose(R"(^-- \[end migration-only\]$)");
  static const std::regex kInline(R"(^[^-\s].*;\s*-- \[migration-only: [a-z -]+\]$)");
  std::string out;
  bool inside = false;
  *sections = 0;
  *statements = 0;
  for (const std::string& line : split_lines(migration)) {
    if (std::regex_match(line, kOpen)) {
      EXPECT_FALSE(inside) << "nested [migration-only] section at: " << line;
      inside = true;
      ++*sections;
    } else if (std::regex_match(line, kClose)) {
      EXPECT_TRUE(inside) << "[end migration-only] without a section";
      inside = false;
    } else if (inside) {
      continue;
    } else if (std::regex_match(line, kInline)) {
      ++*statements;
    } else {
      EXPECT_NE(line.rfind("-- [", 0), 0u) << "unrecognised marker: " << line;
      out += line;
      out += '\n';
    }
  }
  EXPECT_FALSE(inside) << "unterminated [migration-only] section";
  return out;
}

TEST(Upgrade0002Files, MigrationOnlyMarkersDelimitTheFencePreflightAndBackfill) {
  const std::string migration = read_source("sql/migrations/0002_queue_identity.sql");
  int sections = 0, statements = 0;
  const std::string stripped = strip_migration_only(migration, &sections, &statements);
  EXPECT_EQ(sections, 3);    // fence, preflight, backfill of steps/tasks
  EXPECT_EQ(statements, 1);  // backfill of workers.protocol
  for (const std::string gone :
       {"lock table", "set local lock_timeout", "pg_temp.", "BEGIN AUDIT",
        "raise exception e'pgflow 0002", "update pgflow.steps set queue_name",
        "update pgflow.step_tasks set queue_name", "update pgflow.workers set protocol"}) {
    EXPECT_NE(migration.find(gone), std::string::npos) << gone;
    EXPECT_EQ(stripped.find(gone), std::string::npos) << gone << " was not stripped";
  }
  // Everything else stays, including the columns the backfill fills.
  EXPECT_THAT(stripped, HasSubstr("alter table pgflow.step_tasks add column queue_name text;"));
  EXPECT_THAT(stripped,
              HasSubstr("alter table pgflow.step_tasks alter column queue_name set not null;"));
  EXPECT_THAT(stripped, HasSubstr("create function pgflow.claim_tasks("));
}

TEST_F(Upgrade0002, FreshInstallAndUpgradedPopulatedDatabaseHaveIdenticalSchemas) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  const std::string fresh = dump(DumpKind::kPgflowSchema);
  ASSERT_THAT(fresh, HasSubstr("queue_name text NOT NULL"));

  ASSERT_NO_FATAL_FAILURE(populated_0001());  // a second database
  ASSERT_THAT(migrate(url()), IsOk());
  EXPECT_SAME_TEXT(fresh, dump(DumpKind::kPgflowSchema), "fresh install vs upgraded 0001");
}

TEST_F(Upgrade0002,
       MigrationWithoutItsMigrationOnlySectionsGivesTheSameSchemaOnAnEmpty0001Database) {
  ASSERT_NO_FATAL_FAILURE(create_database(2));
  const std::string fresh = dump(DumpKind::kPgflowSchema);

  int sections = 0, statements = 0;
  const std::string stripped = strip_migration_only(
      read_source("sql/migrations/0002_queue_identity.sql"), &sections, &statements);
  ASSERT_NO_FATAL_FAILURE(create_database(1));  // empty: no flows, no runs
  ASSERT_THAT(conn_->exec_script(stripped), IsOk());
  EXPECT_SAME_TEXT(fresh, dump(DumpKind::kPgflowSchema),
                   "full 0002 vs 0002 without [migration-only] sections");
}

TEST_F(Upgrade0002, MigrationWithoutItsBackfillCannotUpgradeAPopulatedDatabase) {
  // What a schema diff alone would produce fails on real data: the new NOT NULL columns need
  // the hand-written backfill. (The statement fails as a whole, changing nothing.)
  int sections = 0, statements = 0;
  const std::string stripped = strip_migration_only(
      read_source("sql/migrations/0002_queue_identity.sql"), &sections, &statements);
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  const std::string before = dump();
  absl::Status s = conn_->exec_script(stripped);
  EXPECT_EQ(sql_state(s), "23502") << s;  // not_null_violation
  EXPECT_THAT(std::string(s.message()), HasSubstr("queue_name"));
  EXPECT_SAME_TEXT(before, dump(), "the failed script changed the database");
}

TEST_F(Upgrade0002, LedgerChecksumMatchesTheMigrationFile) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  const std::string file_sha = scalar("select encode(sha256(convert_to($1, 'UTF8')), 'hex')",
                                      {read_source("sql/migrations/0002_queue_identity.sql")});
  EXPECT_EQ(bundled_migrations()[1].checksum, file_sha)
      << "the library embeds a different 0002 than the source tree (rebuild)";
  EXPECT_EQ(scalar("select checksum from pgflow.schema_migrations where version = 2"), file_sha);
}

// =============================================================================================
// 5. The optional pruning helper
// =============================================================================================

std::string prune_helper_hash_sql() {
  return "select md5(p.prosrc) from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
         "where n.nspname = 'pgflow' and p.proname = 'prune_data_older_than'";
}

TEST_F(Upgrade0002, AuditReportsTheStockPruneHelperForReplacement) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(conn_->exec_script(read_source("tests/upgrade/prune_data_older_than.0001.sql")),
              IsOk());
  EXPECT_THAT(
      audit(),
      Contains(AllOf(
          Field(&AuditRow::severity, Eq("action")),
          Field(&AuditRow::category, Eq("prune_function_installed")),
          Field(&AuditRow::detail, HasSubstr("is the stock pre-queue-identity version")),
          Field(&AuditRow::repair_hint, HasSubstr("sql/contrib/prune_data_older_than.sql")))));
}

TEST_F(Upgrade0002, AuditFlagsACustomizedPruneHelperForManualAdaptation) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  std::string helper = read_source("tests/upgrade/prune_data_older_than.0001.sql");
  const std::string line = "  delete from pgflow.workers w where w.last_heartbeat_at < v_cutoff;\n";
  ASSERT_NE(helper.find(line), std::string::npos);
  helper.replace(helper.find(line), line.size(), "  -- our workers are pruned elsewhere\n");
  ASSERT_THAT(conn_->exec_script(helper), IsOk());
  EXPECT_THAT(audit(),
              Contains(AllOf(Field(&AuditRow::category, Eq("prune_function_installed")),
                             Field(&AuditRow::detail, HasSubstr("differs from the stock version")),
                             Field(&AuditRow::repair_hint, HasSubstr("adapt it by hand")))));
}

TEST_F(Upgrade0002,
       UpgradeKeepsTheInstalledPruneHelperAndItsQueueAwareReplacementPrunesByTaskQueue) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  ASSERT_THAT(conn_->exec_script(read_source("tests/upgrade/prune_data_older_than.0001.sql")),
              IsOk());
  const std::string stock_hash = scalar(prune_helper_hash_sql());
  ASSERT_THAT(migrate(url()), IsOk());
  // Migrations never install, replace or drop the optional helper.
  EXPECT_EQ(scalar(prune_helper_hash_sql()), stock_hash);
  ASSERT_THAT(conn_->exec_script(read_source("sql/contrib/prune_data_older_than.sql")), IsOk());
  EXPECT_NE(scalar(prune_helper_hash_sql()), stock_hash);
  EXPECT_THAT(audit(),
              Not(Contains(Field(&AuditRow::detail, HasSubstr("stock pre-queue-identity")))));

  // History older than the retention: the finished fixture runs (a1, c1, d1), every archived
  // message so far, and the heartbeat of the 0.16.0 greet worker.
  ASSERT_THAT(conn_->exec_script(R"sql(
    update pgflow.runs
    set started_at = started_at - interval '30 days',
        completed_at = completed_at - interval '30 days',
        failed_at = failed_at - interval '30 days'
    where status in ('completed', 'failed');
    update pgmq.a_greet set archived_at = archived_at - interval '30 days';
    update pgmq.a_fanout set archived_at = archived_at - interval '30 days';
    update pgmq.a_fragile set archived_at = archived_at - interval '30 days';
    update pgmq.a_orderflow set archived_at = archived_at - interval '30 days';
    update pgflow.workers set last_heartbeat_at = now() - interval '30 days'
    where worker_id = '11111111-1111-1111-1111-111111111111';
  )sql"),
              IsOk());
  // An old failed run whose tasks still have active messages (in queue "fanout").
  std::string stale = start_flow("fanout", "[7, 8]");
  ASSERT_THAT(
      exec("update pgflow.runs set status = 'failed', "
           "started_at = now() - interval '30 days', failed_at = now() - interval '30 days' "
           "where run_id = $1::uuid",
           {stale}),
      IsOk());
  const std::string stale_msgs = scalar(
      "select array_agg(message_id order by message_id)::text from pgflow.step_tasks "
      "where run_id = $1::uuid",
      {stale});
  EXPECT_EQ(count("select 1 from pgmq.q_fanout where msg_id = any($1::bigint[])", {stale_msgs}),
            "2");
  // A recent completed run (recent archive rows in "greet").
  const std::string worker = "aaaaaaaa-0000-0000-0000-0000000000e1";
  ASSERT_NO_FATAL_FAILURE(register_worker(worker, "greet"));
  std::string recent = start_flow("greet", R"({"name": "Recent"})");
  work("greet", "greet", worker);
  ASSERT_EQ(run_status(recent), "completed");

  ASSERT_THAT(exec("select pgflow.prune_data_older_than('7 days')"), IsOk());

  // Old finished runs are gone with their states and tasks.
  for (const std::string& run :
       {std::string(kRunA1), std::string(kRunC1), std::string(kRunD1), stale}) {
    SCOPED_TRACE(run);
    EXPECT_EQ(count("select 1 from pgflow.runs where run_id = $1::uuid", {run}), "0");
    EXPECT_EQ(count("select 1 from pgflow.step_states where run_id = $1::uuid", {run}), "0");
    EXPECT_EQ(count("select 1 from pgflow.step_tasks where run_id = $1::uuid", {run}), "0");
  }
  // The stale run's still-active messages were deleted from its tasks' queue.
  EXPECT_EQ(count("select 1 from pgmq.q_fanout where msg_id = any($1::bigint[])", {stale_msgs}),
            "0");
  // Old archive rows of every routed queue are gone; recent ones stay.
  for (const char* archive : {"a_greet", "a_fanout", "a_fragile", "a_orderflow"}) {
    SCOPED_TRACE(archive);
    EXPECT_EQ(count(absl::StrCat("select 1 from pgmq.", archive,
                                 " where archived_at < now() - interval '7 days'")),
              "0");
  }
  EXPECT_EQ(count("select 1 from pgmq.a_greet"), "2");  // the recent run's two messages
  // Recent and unfinished runs stay, with their messages.
  for (const std::string& run :
       {recent, std::string(kRunA2), std::string(kRunB1), std::string(kRunD2)}) {
    SCOPED_TRACE(run);
    EXPECT_EQ(count("select 1 from pgflow.runs where run_id = $1::uuid", {run}), "1");
  }
  EXPECT_EQ(count("select 1 from pgmq.q_fanout"), "3");     // b1's each[0..2]
  EXPECT_EQ(count("select 1 from pgmq.q_orderflow"), "1");  // d2's validate
  EXPECT_EQ(count("select 1 from pgflow.workers where worker_id = "
                  "'11111111-1111-1111-1111-111111111111'"),
            "0");
}

// =============================================================================================
// 6. The lock-and-wait fence
// =============================================================================================

TEST_F(Upgrade0002, MigrationBehindAnOpenRunLockTimesOutAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  const std::string before = dump();
  auto holder = pg::Connection::open(url(), "run-lock-holder");
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_THAT(holder->exec("begin"), IsOk());
  ASSERT_THAT(
      holder->exec("select run_id from pgflow.runs where run_id = $1::uuid for update", {kRunB1}),
      IsOk());

  absl::Status s = migrate(url());  // waits for the lock on pgflow.runs (lock_timeout 10 s)
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAborted, HasSubstr("lock timeout")));
  EXPECT_EQ(sql_state(s), "55P03");
  // The holder's transaction is intact, and nothing changed.
  EXPECT_THAT(holder->exec("commit"), IsOk());
  EXPECT_EQ(schema_version(), 1);
  EXPECT_SAME_TEXT(before, dump(), "the timed-out migration changed the database");

  // Run again once the straggler is gone.
  EXPECT_THAT(migrate(url()), IsOk());
  EXPECT_EQ(schema_version(), latest_version());
}

TEST_F(Upgrade0002, ProducerArrivingDuringTheMigrationWaitsAndStartsOnTheNewSchema) {
  ASSERT_NO_FATAL_FAILURE(populated_0001());
  // The gate holds pgmq.meta (the fence's last lock), so the migration stops inside its fence
  // holding every pgflow table lock.
  auto gate = pg::Connection::open(url(), "gate");
  ASSERT_TRUE(gate.ok()) << gate.status();
  ASSERT_THAT(gate->exec("begin"), IsOk());
  ASSERT_THAT(gate->exec("lock table pgmq.meta in row exclusive mode"), IsOk());
  auto producer = pg::Connection::open(url(), "producer");
  ASSERT_TRUE(producer.ok()) << producer.status();
  const int producer_pid = producer->backend_pid();
  // Bounds every wait should the test fail half-way (the fence's own timeout is 10 s).
  ASSERT_THAT(producer->exec("set lock_timeout = '60s'"), IsOk());

  absl::Status migrated = absl::UnknownError("not run");
  absl::StatusOr<pg::Result> produced = absl::UnknownError("not run");
  std::vector<std::string> events;  // in the order observed by this thread
  {
    // Only to 0002: a producer woken by 0002's commit could otherwise race a later migration
    // that changes pgflow.runs (0008) and see its rows change shape mid-statement.
    std::jthread migrator([&] { migrated = migrate(url(), {.target_version = 2}); });
    const int migrator_pid = wait_for_backend(*conn_, "pgflow-migrate");
    ASSERT_NE(migrator_pid, 0);
    ASSERT_TRUE(wait_until_blocked(*conn_, migrator_pid, gate->backend_pid()));
    events.push_back("migration waits inside its fence");
    EXPECT_EQ(count("select 1 from pg_locks where pid = $1::int and granted "
                    "and mode = 'AccessExclusiveLock' and relation in ("
                    "'pgflow.flows'::regclass, 'pgflow.steps'::regclass, 'pgflow.deps'::regclass, "
                    "'pgflow.runs'::regclass, 'pgflow.step_states'::regclass, "
                    "'pgflow.step_tasks'::regclass, 'pgflow.workers'::regclass, "
                    "'pgflow.worker_functions'::regclass)",
                    {std::to_string(migrator_pid)}),
              "8");

    std::jthread producer_thread([&] {
      produced = producer->exec("select run_id::text from pgflow.start_flow('greet', $1::jsonb)",
                                {R"({"name": "Late"})"});
    });
    ASSERT_TRUE(wait_until_blocked(*conn_, producer_pid, migrator_pid));
    events.push_back("producer waits for the migration");
    EXPECT_EQ(schema_version(), 1);

    ASSERT_THAT(gate->exec("commit"), IsOk());
    events.push_back("gate released");
  }
  EXPECT_THAT(events, ::testing::ElementsAre("migration waits inside its fence",
                                             "producer waits for the migration", "gate released"));
  ASSERT_THAT(migrated, IsOk());
  ASSERT_TRUE(produced.ok()) << produced.status();
  EXPECT_EQ(schema_version(), 2);
  ASSERT_THAT(migrate(url()), IsOk());  // the rest, for the worker below

  // The producer's run was created against the new schema: its task carries its queue.
  const std::string run_id(produced->scalar());
  EXPECT_EQ(scalar("select string_agg(step_slug || ':' || queue_name, ',') from pgflow.step_tasks "
                   "where run_id = $1::uuid",
                   {run_id}),
            "hello:greet");
  EXPECT_EQ(count("select 1 from pgmq.q_greet q join pgflow.step_tasks t "
                  "on t.queue_name = 'greet' and t.message_id = q.msg_id where t.run_id = $1::uuid",
                  {run_id}),
            "1");
  const std::string worker = "aaaaaaaa-0000-0000-0000-0000000000f1";
  ASSERT_NO_FATAL_FAILURE(register_worker(worker, "greet"));
  work("greet", "greet", worker);
  EXPECT_EQ(run_status(run_id), "completed");
}

// =============================================================================================
// 7. The startup matrix, at SQL level
// =============================================================================================

TEST_F(Upgrade0002, Database0001HasNoWorkerHandshakeSoANewWorkerRefusesToStart) {
  ASSERT_NO_FATAL_FAILURE(create_database(1));
  auto r = exec("select pgflow.worker_protocol()");
  EXPECT_EQ(sql_state(r.status()), "42883") << r.status();  // undefined_function
  EXPECT_THAT(r.status(),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("pgflow migrate")));
  // Nor can it compile or register the new way.
  EXPECT_EQ(
      sql_state(exec("select pgflow.ensure_flow_compiled('f', $1::jsonb, pgflow.worker_protocol())",
                     {flow_shape({step_shape("s")})})
                    .status()),
      "42883");
  EXPECT_EQ(sql_state(exec("select pgflow.register_worker(gen_random_uuid(), 'f', 'f', 'f', "
                           "pgflow.worker_protocol())")
                          .status()),
            "42883");
  EXPECT_EQ(count("select 1 from pgflow.flows"), "0");
  EXPECT_EQ(count("select 1 from pgflow.workers"), "0");
}

TEST_F(Upgrade0002, NewDatabaseRefusesAReleased0160WorkerBeforeRegistration) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  // The startup SQL of an upstream 0.16.0 worker, in its order.
  auto tracked = exec("select pgflow.track_worker_function('f')");
  EXPECT_THAT(tracked.status(),
              StatusIs(::testing::_, HasSubstr("worker protocol none is not supported")));
  auto compiled =
      exec("select pgflow.ensure_flow_compiled('f', $1::jsonb)", {flow_shape({step_shape("s")})});
  EXPECT_THAT(compiled.status(), StatusIs(::testing::_, HasSubstr("upgrade the worker")));
  auto inserted = exec(
      "insert into pgflow.workers (queue_name, worker_id, function_name) "
      "values ('f', gen_random_uuid(), 'f') returning *");
  EXPECT_FALSE(inserted.ok());
  EXPECT_THAT(std::string(inserted.status().message()), HasSubstr("protocol"));  // none was sent
  // Upstream's three-argument form (allow_data_loss) does not exist either.
  EXPECT_EQ(sql_state(exec("select pgflow.ensure_flow_compiled('f', $1::jsonb, false)",
                           {flow_shape({step_shape("s")})})
                          .status()),
            "42883");
  EXPECT_EQ(count("select 1 from pgflow.workers"), "0");
  EXPECT_EQ(count("select 1 from pgflow.worker_functions"), "0");
  EXPECT_EQ(count("select 1 from pgflow.flows"), "0");
  EXPECT_EQ(count("select 1 from pgmq.meta"), "0");

  // The supported pair: a worker of the current protocol starts.
  EXPECT_EQ(scalar("select pgflow.worker_protocol()::text"), "6");
  EXPECT_EQ(
      scalar(
          "select pgflow.ensure_flow_compiled('f', $1::jsonb, pgflow.worker_protocol())->>'status'",
          {flow_shape({step_shape("s")})}),
      "compiled");
  EXPECT_THAT(exec("select pgflow.register_worker(gen_random_uuid(), 'f', 'f', 'f', "
                   "pgflow.worker_protocol())"),
              IsOk());
}

// =============================================================================================
// 8. Concurrency on the new schema
// =============================================================================================

// Runs `body(i, connection)` for i = 0..n-1 on n threads with their own connections, released
// together; returns each body's status.
std::vector<absl::Status> concurrently(
    const std::string& url, int n, const std::function<absl::Status(int, pg::Connection&)>& body) {
  std::vector<pg::Connection> conns;
  std::vector<absl::Status> results(static_cast<size_t>(n), absl::UnknownError("not run"));
  for (int i = 0; i < n; ++i) {
    auto c = pg::Connection::open(url, absl::StrCat("racer-", i));
    if (!c.ok()) {
      ADD_FAILURE() << c.status();
      return results;
    }
    conns.push_back(std::move(*c));
  }
  std::barrier start(n);
  {
    std::vector<std::jthread> threads;
    for (int i = 0; i < n; ++i) {
      threads.emplace_back([&, i] {
        start.arrive_and_wait();
        results[static_cast<size_t>(i)] = body(i, conns[static_cast<size_t>(i)]);
      });
    }
  }
  return results;
}

TEST_F(Upgrade0002, ConcurrentCompilationOfCaseAliasSlugsCreatesOneFlowAndOneQueue) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  const std::string shape = flow_shape({step_shape("pick")});
  for (int round = 0; round < 5; ++round) {
    SCOPED_TRACE(round);
    const std::string lower = absl::StrCat("orders", round);
    const std::vector<std::string> slugs = {absl::StrCat("Orders", round), lower};
    std::vector<absl::Status> results =
        concurrently(url(), 2, [&](int i, pg::Connection& c) -> absl::Status {
          return c
              .exec("select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())",
                    {slugs[static_cast<size_t>(i)], shape})
              .status();
        });
    int ok = 0;
    for (const absl::Status& s : results) {
      if (s.ok()) {
        ++ok;
      } else {
        EXPECT_THAT(s, StatusIs(absl::StatusCode::kAlreadyExists,
                                HasSubstr("differs only in case from existing flow")));
      }
    }
    EXPECT_EQ(ok, 1);
    EXPECT_EQ(count("select 1 from pgflow.flows where lower(flow_slug) = $1", {lower}), "1");
    EXPECT_EQ(count("select 1 from pgmq.meta where lower(queue_name) = $1", {lower}), "1");
    EXPECT_EQ(scalar("select string_agg(queue_name, ',') from pgflow.steps "
                     "where lower(flow_slug) = $1",
                     {lower}),
              lower);
  }
}

TEST_F(Upgrade0002, ConcurrentAddStepAndDeletionLeaveAConsistentDatabase) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  int added_first = 0, deleted_first = 0;
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE(round);
    const std::string flow = absl::StrCat("shop", round);
    ASSERT_THAT(exec("select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())",
                     {flow, flow_shape({step_shape("a")})}),
                IsOk());
    start_flow(flow, "{}");
    std::vector<absl::Status> results =
        concurrently(url(), 2, [&](int i, pg::Connection& c) -> absl::Status {
          if (i == 0) {
            return c.exec("select pgflow.add_step($1, 'b', array['a'])", {flow}).status();
          }
          return c.exec("select pgflow.delete_flow_and_data($1)", {flow}).status();
        });
    EXPECT_THAT(results[1], IsOk());  // the deletion always goes through
    if (results[0].ok()) {
      ++added_first;
    } else {
      ++deleted_first;
      EXPECT_THAT(results[0], StatusIs(::testing::_, HasSubstr("does not exist")));
    }
    for (const absl::Status& s : results) EXPECT_NE(sql_state(s), "40P01") << s;
    for (const char* table : {"flows", "steps", "deps", "runs", "step_states", "step_tasks"}) {
      EXPECT_EQ(
          count(absl::StrCat("select 1 from pgflow.", table, " where flow_slug = $1"), {flow}), "0")
          << table;
    }
    EXPECT_EQ(count("select 1 from pgmq.meta where lower(queue_name) = $1", {flow}), "0");
    EXPECT_EQ(scalar("select format('%s', to_regclass('pgmq.q_' || $1))", {flow}), "");
  }
  // Which order won varies from run to run; both must end consistent.
  RecordProperty("add_step_first", added_first);
  RecordProperty("deletion_first", deleted_first);
}

TEST_F(Upgrade0002, QueueCreatedByAnotherSessionDuringCompilationIsNeverAdopted) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  auto other = pg::Connection::open(url(), "queue-owner");
  ASSERT_TRUE(other.ok()) << other.status();
  auto compiler = pg::Connection::open(url(), "compiler");
  ASSERT_TRUE(compiler.ok()) << compiler.status();
  const int compiler_pid = compiler->backend_pid();
  ASSERT_THAT(compiler->exec("set lock_timeout = '60s'"), IsOk());  // bounds a failing test

  // Someone else creates the queue "racey" and has not committed yet: compilation's preflight
  // cannot see it.
  ASSERT_THAT(other->exec("begin"), IsOk());
  ASSERT_THAT(other->exec("select pgmq.create('racey')"), IsOk());
  absl::StatusOr<pg::Result> compiled = absl::UnknownError("not run");
  {
    std::jthread t([&] {
      compiled = compiler->exec(
          "select pgflow.ensure_flow_compiled('racey', $1::jsonb, pgflow.worker_protocol())",
          {flow_shape({step_shape("work")})});
    });
    // Provisioning reaches the same tables and waits for the other transaction.
    ASSERT_TRUE(wait_until_blocked(*conn_, compiler_pid, other->backend_pid()));
    ASSERT_THAT(other->exec("commit"), IsOk());
  }
  EXPECT_THAT(compiled.status(), StatusIs(::testing::_, HasSubstr("refusing to adopt")));
  EXPECT_EQ(sql_state(compiled.status()), "42710");  // duplicate_object
  EXPECT_EQ(count("select 1 from pgflow.flows where lower(flow_slug) = 'racey'"), "0");
  EXPECT_EQ(count("select 1 from pgflow.steps where lower(flow_slug) = 'racey'"), "0");
  EXPECT_EQ(scalar("select string_agg(queue_name, ',') from pgmq.meta"), "racey");

  // Compiling again later still refuses the foreign queue.
  auto again =
      exec("select pgflow.ensure_flow_compiled('racey', $1::jsonb, pgflow.worker_protocol())",
           {flow_shape({step_shape("work")})});
  EXPECT_THAT(again.status(), StatusIs(::testing::_, HasSubstr("pgflow never adopts")));
  EXPECT_EQ(count("select 1 from pgflow.flows"), "0");
}

TEST_F(Upgrade0002, ClaimsRacingFlowDeletionEndWithoutDeadlockOrLeftovers) {
  ASSERT_NO_FATAL_FAILURE(create_database(std::nullopt));
  const std::string worker = "aaaaaaaa-0000-0000-0000-0000000000c9";
  ASSERT_THAT(
      exec("select pgflow.ensure_flow_compiled('racer', $1::jsonb, pgflow.worker_protocol())",
           {flow_shape({step_shape("each", {}, "map"), step_shape("total", {"each"})})}),
      IsOk());
  ASSERT_NO_FATAL_FAILURE(register_worker(worker, "racer"));
  for (int i = 0; i < 8; ++i) start_flow("racer", "[1, 2, 3, 4, 5, 6]");

  auto worker_conn = pg::Connection::open(url(), "racer-worker");
  ASSERT_TRUE(worker_conn.ok()) << worker_conn.status();
  auto deleter_conn = pg::Connection::open(url(), "racer-deleter");
  ASSERT_TRUE(deleter_conn.ok()) << deleter_conn.status();

  std::latch claimed_once(1);
  std::atomic<bool> deleted{false};
  absl::Status deletion = absl::UnknownError("not run");
  std::vector<absl::Status> worker_errors;
  int claimed = 0;
  {
    std::jthread worker_thread([&] {
      pg::Connection& c = *worker_conn;
      bool counted_down = false;
      // Until the deletion is done and the worker has noticed (bounded).
      for (int round = 0; round < 5000; ++round) {
        const bool deletion_done = deleted.load();
        auto ids = c.exec(
            "select coalesce(array_agg(msg_id order by msg_id), '{}')::text "
            "from pgmq.read('racer', 30, 3)");
        if (!ids.ok()) {
          worker_errors.push_back(ids.status());
          if (deletion_done) break;
          continue;
        }
        if (std::string(ids->scalar()) == "{}") {
          if (deletion_done) break;
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
          continue;
        }
        auto claims = c.exec(
            "select run_id::text, step_slug, task_index::text from pgflow.claim_tasks("
            "'racer', 'racer', $1::bigint[], $2::uuid) where outcome = 'claimed'",
            {std::string(ids->scalar()), worker});
        if (!claims.ok()) {
          worker_errors.push_back(claims.status());
          if (deletion_done) break;
          continue;
        }
        for (int i = 0; i < claims->rows(); ++i) {
          ++claimed;
          auto done =
              c.exec("select count(*) from pgflow.complete_task($1::uuid, $2, $3::int, '1')",
                     {std::string(claims->text(i, 0)), std::string(claims->text(i, 1)),
                      std::string(claims->text(i, 2))});
          if (!done.ok()) worker_errors.push_back(done.status());
        }
        if (claimed > 0 && !counted_down) {
          claimed_once.count_down();
          counted_down = true;
        }
      }
      if (!counted_down) claimed_once.count_down();
    });
    std::jthread deleter_thread([&] {
      claimed_once.wait();
      deletion = deleter_conn->exec("select pgflow.delete_flow_and_data('racer')").status();
      deleted.store(true);
    });
  }
  EXPECT_GT(claimed, 0);
  EXPECT_THAT(deletion, IsOk());
  EXPECT_TRUE(deleted.load());
  // The worker sees the queue or flow gone, and nothing else (no deadlock, no constraint error).
  for (const absl::Status& s : worker_errors) {
    EXPECT_THAT(sql_state(s), ::testing::Optional(AnyOf("42P01", "P0002"))) << s;
  }
  EXPECT_FALSE(worker_errors.empty()) << "the worker never noticed the deletion";
  for (const char* table : {"flows", "steps", "deps", "runs", "step_states", "step_tasks"}) {
    EXPECT_EQ(count(absl::StrCat("select 1 from pgflow.", table)), "0") << table;
  }
  EXPECT_EQ(count("select 1 from pgmq.meta"), "0");
  EXPECT_EQ(
      scalar("select format('%s %s', to_regclass('pgmq.q_racer'), to_regclass('pgmq.a_racer'))"),
      " ");
  // The narrowest window, made deterministic: a batch read before the deletion is claimed after
  // it. The claim says the flow does not exist.
  auto stale =
      exec("select * from pgflow.claim_tasks('racer', 'racer', '{1, 2}', $1::uuid)", {worker});
  EXPECT_THAT(stale.status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr(R"(Flow "racer" does not exist)")));
}

// =============================================================================================
// 9. 0003 -> 0004: per-step queues
// =============================================================================================

// The fixture of the 0002 tests, brought to 0003: what 0004 meets in production.
class Upgrade0004 : public Upgrade0002 {
 protected:
  void populated_0003() {
    ASSERT_NO_FATAL_FAILURE(populated_0001());
    ASSERT_THAT(migrate(url(), {.target_version = 3}), IsOk());
    ASSERT_EQ(schema_version(), 3);
  }
  // Every row of the runtime and the queues: PGMQ's schema and pgflow's tables except flows
  // (which gains a column) and the ledger. Equal before and after means nothing moved.
  std::string runtime_and_queues() {
    CommandResult r = run_command(
        absl::StrCat(PGFLOW_PG_BIN,
                     "/pg_dump --data-only --no-owner -n pgmq -n pgflow -T pgflow.flows "
                     "-T pgflow.schema_migrations ",
                     shell_quote(url())));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return normalise_dump(r.out);
  }
};

TEST_F(Upgrade0004, PlainFlowsKeepTheirQueuesTasksAndMessagesAndInFlightRunsFinish) {
  ASSERT_NO_FATAL_FAILURE(populated_0003());
  const std::string data_before = runtime_and_queues();
  const std::string flows_before = scalar(
      "select string_agg(flow_slug || ':' || opt_max_attempts || ':' || created_at, ',' order by "
      "flow_slug) "
      "from pgflow.flows");
  ASSERT_THAT(migrate(url(), {.target_version = 4}), IsOk());
  EXPECT_EQ(schema_version(), 4);

  EXPECT_SAME_TEXT(data_before, runtime_and_queues(), "the upgrade changed runtime rows or queues");
  EXPECT_EQ(flows_before,
            scalar("select string_agg(flow_slug || ':' || opt_max_attempts || ':' || created_at, "
                   "',' order by flow_slug) from pgflow.flows"));
  EXPECT_EQ(scalar("select string_agg(distinct queue_mode, ',') from pgflow.flows"), "flow");

  // The in-flight run finishes on the upgraded database, in its flow's one queue.
  ASSERT_NO_FATAL_FAILURE(finish_in_flight_fanout("aaaaaaaa-0000-0000-0000-0000000000c1"));
  // And a flow compiled now in step mode lives beside them.
  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('stepped', $1::jsonb, "
                   "pgflow.worker_protocol(), 'step')->>'status'",
                   {flow_shape({step_shape("s")})}),
            "compiled");
  EXPECT_EQ(scalar("select queue_name from pgflow.steps where flow_slug = 'stepped'"),
            "stepped__s");
}

TEST_F(Upgrade0004, BehindALongTransactionOnFlowsTheMigrationTimesOutAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(populated_0003());
  const std::string before = dump();
  auto holder = pg::Connection::open(url(), "flows-reader");
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_THAT(holder->exec("begin"), IsOk());
  ASSERT_THAT(holder->exec("select count(*) from pgflow.flows"), IsOk());  // holds ACCESS SHARE

  absl::Status s = migrate(
      url(),
      {.target_version = 4});  // adding the column waits for ACCESS EXCLUSIVE (lock_timeout 10 s)
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAborted, HasSubstr("lock timeout")));
  EXPECT_EQ(sql_state(s), "55P03");
  EXPECT_THAT(holder->exec("commit"), IsOk());
  EXPECT_EQ(schema_version(), 3);
  EXPECT_SAME_TEXT(before, dump(), "the timed-out migration changed the database");

  EXPECT_THAT(migrate(url(), {.target_version = 4}), IsOk());
  EXPECT_EQ(schema_version(), 4);
}

TEST_F(Upgrade0004,
       MigrationWithoutItsMigrationOnlySectionsGivesTheSameSchemaOnAnEmpty0003Database) {
  ASSERT_NO_FATAL_FAILURE(create_database(4));
  const std::string fresh = dump(DumpKind::kPgflowSchema);
  int sections = 0, statements = 0;
  const std::string stripped = strip_migration_only(
      read_source("sql/migrations/0004_step_queues.sql"), &sections, &statements);
  EXPECT_EQ(sections, 1);  // the lock timeout
  EXPECT_EQ(statements, 0);
  ASSERT_NO_FATAL_FAILURE(create_database(3));
  ASSERT_THAT(conn_->exec_script(stripped), IsOk());
  EXPECT_SAME_TEXT(fresh, dump(DumpKind::kPgflowSchema),
                   "full 0004 vs 0004 without [migration-only] sections");
}

// =============================================================================================
// 10. 0004 -> 0005: flow aliases
// =============================================================================================

// The 0001 fixture brought to 0004, plus a step-queued flow with a run in flight: what 0005
// meets in production.
class Upgrade0005 : public Upgrade0002 {
 protected:
  void populated_0004() {
    ASSERT_NO_FATAL_FAILURE(populated_0001());
    ASSERT_THAT(migrate(url(), {.target_version = 4}), IsOk());
    ASSERT_EQ(schema_version(), 4);
    ASSERT_EQ(
        scalar("select pgflow.ensure_flow_compiled('stepped', $1::jsonb, 3, 'step')->>'status'",
               {flow_shape({step_shape("s")})}),
        "compiled");
    stepped_run_ = start_flow("stepped", "{}");
  }
  // Every row of the runtime and the queues: PGMQ's schema and pgflow's tables except flows
  // (which gains a column), flow_aliases (new) and the ledger.
  std::string runtime_and_queues() {
    CommandResult r = run_command(absl::StrCat(
        PGFLOW_PG_BIN,
        "/pg_dump --data-only --no-owner -n pgmq -n pgflow -T pgflow.flows -T pgflow.flow_aliases "
        "-T pgflow.schema_migrations -T pgflow.locks ",
        shell_quote(url())));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return normalise_dump(r.out);
  }
  // Runs the 0005 upgrade expecting it to fail; the database must be exactly as before.
  void expect_refused(const std::string& message) {
    const std::string before = dump();
    absl::Status s = migrate(url(), {.target_version = 5});
    EXPECT_THAT(s, StatusIs(::testing::_, HasSubstr(message)));
    EXPECT_EQ(schema_version(), 4);
    EXPECT_SAME_TEXT(before, dump(), "the failed migration changed the database");
  }
  std::string stepped_run_;
};

TEST_F(Upgrade0005, ExistingFlowsBecomeActiveSelfAliasesAndEverythingElseStays) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  const std::string data_before = runtime_and_queues();
  const std::string flows_before = scalar(
      "select string_agg(flow_slug || ':' || queue_mode || ':' || created_at, ',' order by "
      "flow_slug) "
      "from pgflow.flows");
  ASSERT_THAT(migrate(url(), {.target_version = 5}), IsOk());
  EXPECT_EQ(schema_version(), 5);

  EXPECT_SAME_TEXT(data_before, runtime_and_queues(), "the upgrade changed runtime rows or queues");
  EXPECT_EQ(flows_before,
            scalar("select string_agg(flow_slug || ':' || queue_mode || ':' || created_at, ',' "
                   "order by flow_slug) from pgflow.flows"));
  // Every flow is its own alias and that alias's active version; nothing inferred from names.
  EXPECT_EQ(count("select 1 from pgflow.flows where flow_alias is distinct from flow_slug"), "0");
  EXPECT_EQ(scalar("select string_agg(flow_alias || '->' || flow_slug, ' ' order by flow_alias) "
                   "from pgflow.flow_aliases"),
            "fanout->fanout fragile->fragile greet->greet orderFlow->orderFlow stepped->stepped");

  // Existing calls keep working through the self-aliases; runs carry the concrete slug.
  EXPECT_EQ(scalar("select flow_slug from pgflow.runs where run_id = $1::uuid",
                   {start_flow("greet", R"({"name": "Cy"})")}),
            "greet");
  EXPECT_EQ(
      scalar("select pgflow.ensure_flow_compiled('stepped', $1::jsonb, 4, 'step')->>'activation'",
             {flow_shape({step_shape("s")})}),
      "active");
  // In-flight runs finish: the fixture's fanout run, and the step-queued run in its step queue.
  ASSERT_NO_FATAL_FAILURE(finish_in_flight_fanout("aaaaaaaa-0000-0000-0000-0000000000d1"));
  ASSERT_THAT(exec("select pgflow.register_worker('aaaaaaaa-0000-0000-0000-0000000000d2', "
                   "'stepped-s-worker', "
                   "'stepped', 'stepped__s', 4)"),
              IsOk());
  EXPECT_EQ(scalar("select count(*)::text from pgflow.claim_tasks('stepped__s', 'stepped', "
                   "array(select msg_id from pgmq.read('stepped__s', 30, 10)), "
                   "'aaaaaaaa-0000-0000-0000-0000000000d2', 's')"),
            "1");
  ASSERT_THAT(exec("select pgflow.complete_task($1::uuid, 's', 0, '1')", {stepped_run_}), IsOk());
  EXPECT_EQ(run_status(stepped_run_), "completed");
}

TEST_F(Upgrade0005, APreExistingAliasTableIsRefusedAndNothingChanges) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  ASSERT_THAT(exec("create table pgflow.flow_aliases (name text)"), IsOk());
  expect_refused("pgflow.flow_aliases or pgflow.flows.flow_alias exists already");
}

TEST_F(Upgrade0005, AFailureAfterTheBackfillRollsEverythingBack) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  // An object named like one the migration creates late, after the column and the backfill.
  ASSERT_THAT(exec("create index flow_aliases_flow_alias_lower_key on pgflow.runs (run_id)"),
              IsOk());
  expect_refused("flow_aliases_flow_alias_lower_key");
  EXPECT_EQ(count("select 1 from pg_attribute where attrelid = 'pgflow.flows'::regclass and "
                  "attname = 'flow_alias'"),
            "0");
}

TEST_F(Upgrade0005, BehindALongTransactionOnFlowsTheMigrationTimesOutAndChangesNothing) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  const std::string before = dump();
  auto holder = pg::Connection::open(url(), "flows-reader");
  ASSERT_TRUE(holder.ok()) << holder.status();
  ASSERT_THAT(holder->exec("begin"), IsOk());
  ASSERT_THAT(holder->exec("select count(*) from pgflow.flows"), IsOk());  // holds ACCESS SHARE

  absl::Status s = migrate(
      url(), {.target_version = 5});  // the fence waits for ACCESS EXCLUSIVE (lock_timeout 10 s)
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAborted, HasSubstr("lock timeout")));
  EXPECT_EQ(sql_state(s), "55P03");
  EXPECT_THAT(holder->exec("commit"), IsOk());
  EXPECT_EQ(schema_version(), 4);
  EXPECT_SAME_TEXT(before, dump(), "the timed-out migration changed the database");

  EXPECT_THAT(migrate(url(), {.target_version = 5}), IsOk());
  EXPECT_EQ(schema_version(), 5);
}

TEST_F(Upgrade0005,
       MigrationWithoutItsMigrationOnlySectionsGivesTheSameSchemaOnAnEmpty0004Database) {
  ASSERT_NO_FATAL_FAILURE(create_database(5));
  const std::string fresh = dump(DumpKind::kPgflowSchema);
  int sections = 0, statements = 0;
  const std::string stripped = strip_migration_only(
      read_source("sql/migrations/0005_flow_aliases.sql"), &sections, &statements);
  EXPECT_EQ(sections, 3);    // fence, preflight, backfill of the alias rows
  EXPECT_EQ(statements, 1);  // backfill of flows.flow_alias
  ASSERT_NO_FATAL_FAILURE(create_database(4));
  ASSERT_THAT(conn_->exec_script(stripped), IsOk());
  EXPECT_SAME_TEXT(fresh, dump(DumpKind::kPgflowSchema),
                   "full 0005 vs 0005 without [migration-only] sections");
}

// =============================================================================================
// 11. 0005 -> 0006: batch results
// =============================================================================================

// 0006 only replaces and adds functions. A task claimed by a protocol-4 worker before the
// upgrade is completed by a protocol-5 batch after it; a protocol-4 worker still starts
// (compiles, registers) and reports one result at a time, so workers can follow later.
TEST_F(Upgrade0005, TasksInFlightFinishThroughBatchesAndProtocol4WorkersStillStart) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  ASSERT_THAT(migrate(url(), {.target_version = 5}), IsOk());
  ASSERT_THAT(exec("select pgflow.register_worker('aaaaaaaa-0000-0000-0000-0000000000e1', "
                   "'stepped-s-worker', "
                   "'stepped', 'stepped__s', 4)"),
              IsOk());
  ASSERT_EQ(scalar("select count(*)::text from pgflow.claim_tasks('stepped__s', 'stepped', "
                   "array(select msg_id from pgmq.read('stepped__s', 30, 10)), "
                   "'aaaaaaaa-0000-0000-0000-0000000000e1', 's')"),
            "1");
  const std::string data_before = runtime_and_queues();

  ASSERT_THAT(migrate(url(), {.target_version = 6}), IsOk());
  EXPECT_EQ(schema_version(), 6);
  EXPECT_SAME_TEXT(data_before, runtime_and_queues(), "the upgrade changed runtime rows or queues");
  EXPECT_EQ(scalar("select pgflow.worker_protocol()::text"), "5");

  EXPECT_EQ(scalar("select string_agg(status, ',') from "
                   "pgflow.complete_tasks(jsonb_build_array(jsonb_build_object("
                   "'run_id', $1::uuid, 'step_slug', 's', 'task_index', 0, 'output', 1)))",
                   {stepped_run_}),
            "completed");
  EXPECT_EQ(run_status(stepped_run_), "completed");

  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('stepped', $1::jsonb, 4, 'step')->>'status'",
                   {flow_shape({step_shape("s")})}),
            "verified");
  const std::string run = start_flow("stepped", "{}");
  ASSERT_THAT(exec("select pgflow.register_worker('aaaaaaaa-0000-0000-0000-0000000000e2', "
                   "'stepped-s-worker', "
                   "'stepped', 'stepped__s', 4)"),
              IsOk());
  ASSERT_EQ(scalar("select count(*)::text from pgflow.claim_tasks('stepped__s', 'stepped', "
                   "array(select msg_id from pgmq.read('stepped__s', 30, 10)), "
                   "'aaaaaaaa-0000-0000-0000-0000000000e2', 's')"),
            "1");
  ASSERT_THAT(exec("select pgflow.complete_task($1::uuid, 's', 0, '1')", {run}), IsOk());
  EXPECT_EQ(run_status(run), "completed");
}

// =============================================================================================
// 12. 0006 -> 0007: lean starts
// =============================================================================================

// 0007 only adds start_run / start_run_by_slug: runs in flight are untouched and finish; the
// new entry points start runs of flows compiled before the upgrade and return their ids.
TEST_F(Upgrade0005, LeanStartsArriveAndRunsInFlightAreUntouched) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  ASSERT_THAT(migrate(url(), {.target_version = 6}), IsOk());
  const std::string data_before = runtime_and_queues();

  ASSERT_THAT(migrate(url(), {.target_version = 7}), IsOk());
  EXPECT_EQ(schema_version(), 7);
  EXPECT_SAME_TEXT(data_before, runtime_and_queues(), "the upgrade changed runtime rows or queues");

  const std::string by_alias = scalar("select pgflow.start_run('stepped', '{}')::text");
  EXPECT_EQ(run_status(by_alias), "started");
  const std::string by_slug = scalar("select pgflow.start_run_by_slug('stepped', '{}')::text");
  EXPECT_EQ(run_status(by_slug), "started");
  EXPECT_NE(by_alias, by_slug);

  ASSERT_THAT(exec("select pgflow.register_worker('aaaaaaaa-0000-0000-0000-0000000000e3', "
                   "'stepped-s-worker', "
                   "'stepped', 'stepped__s', 5)"),
              IsOk());
  ASSERT_EQ(scalar("select count(*)::text from pgflow.claim_tasks('stepped__s', 'stepped', "
                   "array(select msg_id from pgmq.read('stepped__s', 30, 10)), "
                   "'aaaaaaaa-0000-0000-0000-0000000000e3', 's')"),
            "3")
      << "the run from before the upgrade and the two new ones are claimed together";
  ASSERT_THAT(exec("select pgflow.complete_task($1::uuid, 's', 0, '1')", {stepped_run_}), IsOk());
  EXPECT_EQ(run_status(stepped_run_), "completed");
}

// =============================================================================================
// 13. 0007 -> 0008: run control
// =============================================================================================

// 0008 adds three nullable columns to pgflow.runs (no rewrite) and the run control functions:
// every other row and message is untouched, existing runs keep their values with the new
// columns empty, and a run in flight from before can be cancelled, resumed and finished.
TEST_F(Upgrade0005, RunControlArrivesWithEmptyColumnsAndRunsInFlightCanBeCancelledAndResumed) {
  ASSERT_NO_FATAL_FAILURE(populated_0004());
  ASSERT_THAT(migrate(url(), {.target_version = 7}), IsOk());
  // The dump without pgflow.runs, whose COPY gains the new columns.
  const auto without_runs = [](std::string dump) {
    const size_t start = dump.find("COPY pgflow.runs (");
    if (start != std::string::npos) dump.erase(start, dump.find("\\.\n", start) + 3 - start);
    return dump;
  };
  constexpr char kRunsQuery[] =
      "select string_agg(concat_ws('|', run_id, flow_slug, status, input, output, remaining_steps, "
      "started_at, "
      "completed_at, failed_at), ';' order by run_id) from pgflow.runs";
  const std::string data_before = without_runs(runtime_and_queues());
  const std::string runs_before = scalar(kRunsQuery);
  ASSERT_NE(data_before.find("COPY pgflow.step_tasks"), std::string::npos);

  ASSERT_THAT(migrate(url(), {.target_version = 8}), IsOk());
  EXPECT_EQ(schema_version(), 8);
  EXPECT_SAME_TEXT(data_before, without_runs(runtime_and_queues()),
                   "the upgrade changed runtime rows or queues");
  EXPECT_EQ(runs_before, scalar(kRunsQuery));
  EXPECT_EQ(scalar("select count(*)::text from pgflow.runs where cancelled_at is not null or "
                   "cancel_reason is not null "
                   "or restart_of_run_id is not null"),
            "0");

  EXPECT_EQ(scalar("select pgflow.cancel_run($1::uuid, 'upgrade test')::text", {stepped_run_}),
            "true");
  EXPECT_EQ(run_status(stepped_run_), "failed");
  EXPECT_EQ(scalar("select (pgflow.resume_run($1::uuid)).status", {stepped_run_}), "started");
  ASSERT_THAT(exec("select pgflow.register_worker('aaaaaaaa-0000-0000-0000-0000000000e4', "
                   "'stepped-s-worker', "
                   "'stepped', 'stepped__s', 5)"),
              IsOk());
  ASSERT_EQ(scalar("select count(*)::text from pgflow.claim_tasks('stepped__s', 'stepped', "
                   "array(select msg_id from pgmq.read('stepped__s', 30, 10)), "
                   "'aaaaaaaa-0000-0000-0000-0000000000e4', 's')"),
            "1");
  ASSERT_THAT(exec("select pgflow.complete_task($1::uuid, 's', 0, '1')", {stepped_run_}), IsOk());
  EXPECT_EQ(run_status(stepped_run_), "completed");
}

// =============================================================================================
// 14. 0011 -> 0012: role boundaries
// =============================================================================================

// 0012 pins every function's search_path, makes the worker API SECURITY DEFINER and moves the
// definition and stall recovery locks to rows of a new table; no runtime row or message
// changes. It refuses rows that name a queue other than their route, which pgflow never
// writes and a worker role could before.
class Upgrade0012 : public Upgrade0005 {
 protected:
  void populated_0011() {
    ASSERT_NO_FATAL_FAILURE(populated_0004());
    ASSERT_THAT(migrate(url(), {.target_version = 11}), IsOk());
    ASSERT_EQ(schema_version(), 11);
  }
  std::vector<AuditRow> audit_0012() {
    return run_audit(url(), AuditSession::kReadOnly, "sql/audit/0012_role_boundaries_audit.sql");
  }
};

TEST_F(Upgrade0012, PinsEverySearchPathKeepsRuntimeDataAndRunsInFlightFinish) {
  ASSERT_NO_FATAL_FAILURE(populated_0011());
  const std::string data_before = runtime_and_queues();
  const std::string bundled =
      scalar("select (not exists (select 1 from pg_extension where extname = 'pgmq'))::text");
  ASSERT_THAT(migrate(url(), {.target_version = 12}), IsOk());
  EXPECT_EQ(schema_version(), 12);
  EXPECT_SAME_TEXT(data_before, runtime_and_queues(), "the upgrade changed runtime rows or queues");
  EXPECT_EQ(
      scalar(
          "select string_agg(lock_name || '=' || coalesce(last_completed_at::text, 'never'), ',') "
          "from pgflow.locks"),
      "stall_recovery=never")
      << "the new table holds only the stall recovery row";
  EXPECT_EQ(scalar("select count(*)::text from pg_proc where pronamespace = 'pgflow'::regnamespace "
                   "and proconfig[1] is distinct from 'search_path=pg_catalog, pg_temp'"),
            "0");
  EXPECT_EQ(
      scalar("select count(*)::text from pg_proc where pronamespace = 'pgmq'::regnamespace "
             "and proconfig[1] is not distinct from 'search_path=pg_catalog, pg_temp'") != "0",
      bundled == "true")
      << "the bundled PGMQ layer is pinned too; the extension's functions are left as they ship";
  EXPECT_EQ(scalar("select count(*)::text from pg_proc where pronamespace = 'pgmq'::regnamespace "
                   "and 'search_path=\"\"' = any(proconfig)"),
            "0");
  ASSERT_NO_FATAL_FAILURE(finish_in_flight_fanout("aaaaaaaa-0000-0000-0000-0000000000f1"));
}

TEST_F(Upgrade0012, RowsNamingAnotherQueueAreListedByTheAuditRefusedAndNothingChanges) {
  ASSERT_NO_FATAL_FAILURE(populated_0011());
  // What a pgflow_worker login could write before 0012: a step of a new flow routed to an
  // application's queue, and a task of an existing flow re-addressed to one of its messages.
  ASSERT_THAT(exec("select pgmq.create('billing')"), IsOk());
  ASSERT_THAT(
      conn_->exec_script(
          "insert into pgflow.flows (flow_slug, flow_alias) values ('planted', 'planted');"
          "insert into pgflow.flow_aliases (flow_alias, flow_slug) values ('planted', 'planted');"
          "insert into pgflow.steps (flow_slug, step_slug, step_index, queue_name) "
          "values ('planted', 'evil', 0, 'billing')"),
      IsOk());
  ASSERT_THAT(
      exec("update pgflow.step_tasks set queue_name = 'billing' where run_id = $1::uuid", {kRunB1}),
      IsOk());
  const std::string b1_tasks =
      scalar("select count(*)::text from pgflow.step_tasks where run_id = $1::uuid", {kRunB1});

  const std::vector<AuditRow> findings = audit_0012();
  EXPECT_THAT(findings, ::testing::Contains(AuditError("step_off_route", "planted", "evil")));
  EXPECT_THAT(findings, ::testing::Contains(AuditError("task_off_route", "fanout", "each")));
  std::vector<std::string> details;
  for (const AuditRow& row : findings) {
    if (row.severity == "error") details.push_back(row.detail);
  }
  ASSERT_EQ(details.size(), 2u);

  const std::string before = dump();
  absl::Status s = migrate(url(), {.target_version = 12});
  EXPECT_THAT(s, StatusIs(::testing::_, HasSubstr("name a queue that is not their route")));
  for (const std::string& detail : details)
    EXPECT_THAT(s.message(), HasSubstr(detail)) << "worded as the audit";
  EXPECT_EQ(schema_version(), 11);
  EXPECT_SAME_TEXT(before, dump(), "the refused migration changed the database");
  EXPECT_THAT(details, ::testing::Contains(absl::StrCat(
                           b1_tasks,
                           " task(s) of step \"each\" of flow \"fanout\" "
                           "name queue \"billing\", not their step's queue \"fanout\"")));

  // Removing the planted rows lets it through.
  ASSERT_THAT(
      exec("update pgflow.step_tasks set queue_name = 'fanout' where run_id = $1::uuid", {kRunB1}),
      IsOk());
  ASSERT_THAT(
      conn_->exec_script(
          "delete from pgflow.steps where flow_slug = 'planted'; delete from pgflow.flow_aliases "
          "where flow_alias = 'planted'; delete from pgflow.flows where flow_slug = 'planted'"),
      IsOk());
  EXPECT_THAT(audit_0012(),
              ::testing::Not(::testing::Contains(Field(&AuditRow::severity, Eq("error")))));
  EXPECT_THAT(migrate(url(), {.target_version = 12}), IsOk());
}

// 0018 replaces ensure_flow_compiled's six-argument signature with a seven-argument one: a role
// granted the old one (pgflow_worker, or an application's) can call the new one right after
// the migration, before grants.sql runs again. Tasks queued before it have no gate: a worker
// claims them as before.
TEST_F(Upgrade0002, Upgrade0018CarriesCompileGrantsOverAndLeavesQueuedTasksUngated) {
  ASSERT_NO_FATAL_FAILURE(create_database(17));
  const std::string role = absl::StrCat("pgflow_u18_", getpid());
  ASSERT_THAT(exec(absl::StrCat("create role ", role, " nologin")), IsOk());
  ASSERT_THAT(exec(absl::StrCat("grant execute on function pgflow.ensure_flow_compiled(text, "
                                "jsonb, int, text, jsonb, text) to ",
                                role)),
              IsOk());
  const std::string shape =
      R"({"steps": [{"slug": "a", "stepType": "single", "dependencies": [], "whenUnmet": "skip",
          "whenExhausted": "fail", "requiredInputPattern": {"defined": false},
          "forbiddenInputPattern": {"defined": false}}]})";
  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('before18', $1::jsonb, "
                   "pgflow.worker_protocol(), 'flow', null, null)->>'status'",
                   {shape}),
            "compiled");
  const std::string run = scalar("select pgflow.start_run('before18', '{}')::text");

  ASSERT_THAT(migrate(url()), IsOk());
  EXPECT_EQ(scalar(absl::StrCat("select has_function_privilege('", role,
                                "', 'pgflow.ensure_flow_compiled(text, jsonb, int, text, jsonb, "
                                "text, jsonb)', 'EXECUTE')::text")),
            "true");
  EXPECT_EQ(scalar("select coalesce(t.gate, 'none') || ' ' || (q.vt <= clock_timestamp())::text "
                   "from pgflow.step_tasks t join pgmq.q_before18 q on q.msg_id = t.message_id "
                   "where t.run_id = $1::uuid",
                   {run}),
            "none true");
  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('before18', $1::jsonb, "
                   "pgflow.worker_protocol(), 'flow', null, null)->>'status'",
                   {shape}),
            "verified");
  ASSERT_THAT(conn_->exec_script(absl::StrCat("drop owned by ", role, "; drop role ", role)),
              IsOk());
}

// 0022 takes the invisible messages of held tasks out of their queues: the tasks wait without
// one and get a new, visible message when admitted; the admitted task keeps its own.
TEST_F(Upgrade0002, Upgrade0022HeldTasksLoseTheirInvisibleMessagesAndAreAdmittedWithNewOnes) {
  ASSERT_NO_FATAL_FAILURE(create_database(21));
  const std::string shape =
      R"({"steps": [{"slug": "a", "stepType": "single", "dependencies": [], "whenUnmet": "skip",
          "whenExhausted": "fail", "requiredInputPattern": {"defined": false},
          "forbiddenInputPattern": {"defined": false}}]})";
  EXPECT_EQ(scalar("select pgflow.ensure_flow_compiled('capped22', $1::jsonb, "
                   "pgflow.worker_protocol(), 'flow', null, null, "
                   "'{\"concurrencyLimit\": 1}')->>'status'",
                   {shape}),
            "compiled");
  for (int i = 0; i < 3; ++i) {
    ASSERT_THAT(exec("select pgflow.start_run('capped22', jsonb_build_object('n', $1::int))",
                     {std::to_string(i)}),
                IsOk());
  }
  const std::string admitted_msg = scalar(
      "select message_id::text from pgflow.step_tasks where flow_slug = 'capped22' and gate = "
      "'admitted'");
  ASSERT_EQ(count("select 1 from pgmq.q_capped22 where vt = 'infinity'"), "2");

  ASSERT_THAT(migrate(url()), IsOk());
  EXPECT_EQ(
      scalar("select string_agg(gate || ' ' || coalesce(message_id::text, 'none'), ', ' "
             "order by gate, message_id) from pgflow.step_tasks where flow_slug = 'capped22'"),
      absl::StrCat("admitted ", admitted_msg, ", held none, held none"));
  EXPECT_EQ(scalar("select string_agg(msg_id::text, ',') from pgmq.q_capped22"), admitted_msg);
  EXPECT_EQ(scalar("select tgenabled::text from pg_trigger where tgname = 'gated_tasks_admitted'"),
            "O")
      << "the backfill turns the admission trigger off and on again";

  ASSERT_NO_FATAL_FAILURE(register_worker("aaaaaaaa-0000-0000-0000-000000000022", "capped22"));
  for (int i = 0; i < 3; ++i) {
    const std::string run = scalar(
        "select run_id::text from pgflow.claim_tasks('capped22', 'capped22', "
        "array(select msg_id from pgmq.read('capped22', 30, 10)), "
        "'aaaaaaaa-0000-0000-0000-000000000022') where outcome = 'claimed'");
    ASSERT_NE(run, "<no row>") << "claim " << i;
    ASSERT_THAT(exec("select pgflow.complete_task($1::uuid, 'a', 0, '1')", {run}), IsOk());
  }
  EXPECT_EQ(count("select 1 from pgflow.runs where flow_slug = 'capped22' and status = "
                  "'completed'"),
            "3");
  EXPECT_EQ(count("select 1 from pgmq.q_capped22"), "0");
}

}  // namespace
}  // namespace pgflow
