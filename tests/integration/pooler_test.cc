// A fleet behind a transaction pooler: PgBouncer 1.18 (pool_mode = transaction, 8 server
// connections per database; scripts/pgpooler, started by ctest in front of the cluster). Workers,
// the client, the CLI and migrate run through it, in both wake-up modes: poll-only, and LISTEN
// on a direct connection beside the pooled one (docs/deploying-at-scale.md).
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "pgflow/status.h"
#include "pgflow/worker.h"
#include "testing/command.h"
#include "testing/database_test.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"
#include "testing/worker_flows.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using pgflow::testing::CommandResult;
using pgflow::testing::Holders;
using pgflow::testing::IsOk;
using pgflow::testing::IsOkAndHolds;
using pgflow::testing::LogRecorder;
using pgflow::testing::pooled_url;
using pgflow::testing::run_command;
using pgflow::testing::shell_quote;
using pgflow::testing::test_worker_config;
using pgflow::testing::TestDatabase;
using pgflow::testing::wait_for;
using ::testing::HasSubstr;

class PoolerTest : public pgflow::testing::DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    absl::StatusOr<std::string> url = pooled_url(*db_);
    ASSERT_THAT(url, IsOk());
    pooled_ = *url;
  }
  std::string pooled_;
};

// Through transaction pooling a session is a transaction long: the server connection that ran
// a client's PREPARE and SET serves another client next, and the first client's next
// transaction runs elsewhere. This is the rule every statement path of pgflow keeps (no named
// prepared statements, no session settings relied on across transactions, no session locks, no
// LISTEN on a pooled connection), and why the rest of this suite runs through the pooler.
TEST_F(PoolerTest, SessionStateDoesNotOutliveATransactionThroughThePooler) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection client, pg::Connection::open(pooled_, "preparer"));
  ASSERT_THAT(client.exec("begin").status(), IsOk());
  ASSERT_THAT(client.exec("prepare pooled_probe as select 42").status(), IsOk());
  ASSERT_THAT(client.exec("set statement_timeout = '4321ms'").status(), IsOk());
  ASSERT_THAT(client.exec("set timezone = 'America/New_York'").status(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result first, client.exec("select pg_backend_pid()"));
  const std::string prepared_on(first.scalar());
  ASSERT_THAT(client.exec("commit").status(), IsOk());

  // Other clients open transactions until one holds that server connection (the pooler hands
  // out the most recently used first); at most 7, so one of the 8 stays free for `client`.
  std::vector<pg::Connection> others;
  bool taken = false;
  for (int i = 0; i < 7 && !taken; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection other, pg::Connection::open(pooled_, "other"));
    ASSERT_THAT(other.exec("begin").status(), IsOk());
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result pid, other.exec("select pg_backend_pid()"));
    taken = pid.scalar() == prepared_on;
    others.push_back(std::move(other));
  }
  ASSERT_TRUE(taken) << "another client got the server connection that ran the PREPARE";

  ASSERT_THAT(client.exec("begin").status(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result now, client.exec("select pg_backend_pid()"));
  EXPECT_NE(now.scalar(), prepared_on) << "the client's next transaction runs elsewhere";
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result timeout, client.exec("show statement_timeout"));
  EXPECT_EQ(timeout.scalar(), "0") << "the SET stayed with the other server connection";
  // Except the few parameters PgBouncer carries to the client's next server connection (the
  // CLI's `set timezone = 'UTC'` relies on it).
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result zone, client.exec("show timezone"));
  EXPECT_EQ(zone.scalar(), "America/New_York");
  absl::StatusOr<pg::Result> executed = client.exec("execute pooled_probe");
  EXPECT_EQ(sql_state(executed.status()), "26000")
      << "the named prepared statement is gone: " << executed.status();
}

// The two ways a pooled worker learns of new work and of stopped tasks.
enum class WakeUps { kPollOnly, kDirectListen };

class PooledWorkerTest : public PoolerTest, public ::testing::WithParamInterface<WakeUps> {
 protected:
  void SetUp() override {
    PoolerTest::SetUp();
    if (HasFatalFailure()) return;
    ClientConfig client_config{.connection_string = pooled_};
    if (GetParam() == WakeUps::kPollOnly) {
      client_config.poll_only = true;
    } else {
      client_config.listen_connection_string = db_->url();
    }
    absl::StatusOr<Client> client = Client::connect(client_config);
    ASSERT_THAT(client, IsOk());
    client_.emplace(*std::move(client));
  }
  // A worker through the pooler, in this test's wake-up mode.
  WorkerConfig config(int max_concurrent = 4) {
    WorkerConfig c = test_worker_config(pooled_, &logs_);
    c.max_concurrent = max_concurrent;
    c.batch_size = max_concurrent;
    if (GetParam() == WakeUps::kPollOnly) {
      c.poll_only = true;
    } else {
      c.listen_connection_string = db_->url();
    }
    return c;
  }

  LogRecorder logs_;
  std::optional<Client> client_;
};

TEST_P(PooledWorkerTest, RunsAFlowWithMapStepsToItsEndAndStops) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(testing::worker_flows::maps, config()));
  std::vector<std::string> runs;
  for (int i = 0; i < 5; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(
        std::string run_id,
        client_->start_run(testing::worker_flows::maps, std::vector<int>{1, 2, 3, i}));
    runs.push_back(run_id);
  }
  for (int i = 0; i < 5; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                                client_->wait_for_run(runs[i], std::chrono::seconds(60)));
    EXPECT_EQ(run.status, RunStatus::kCompleted);
    // squares 1, 4, 9, i*i halved: 0 + 2 + 4 + i*i/2
    EXPECT_EQ(run.output.value_or(nullptr)["sum"], 6 + i * i / 2) << "run " << i;
  }
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(sql("select count(*) filter (where stopped_at is not null) || '/' || count(*) "
                "from pgflow.workers"),
            "1/1")
      << "the stopped worker marked itself stopped";
}

// The baseline of the pooled deployment: a cancel reached 0 of 8 handlers through the pooler
// (the stop announcement went to a pooled LISTEN). Heartbeats are a minute apart here, so the
// handlers stop by the mode's own path: the poll-only check, or the direct LISTEN.
TEST_P(PooledWorkerTest, CancellingARunStopsEveryRunningHandler) {
  Holders holders;
  auto flow = Flow<"plCancel", std::vector<int>>().map<"hold">(
      [&holders](int x, Context& ctx) { return holders.hold(x, ctx); });
  WorkerConfig c = config(8);
  c.heartbeat_interval = std::chrono::seconds(60);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, c));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                              client_->start_run(flow, std::vector<int>(20, 1)));
  ASSERT_TRUE(wait_for([&] { return holders.started.load() == 8; }));

  EXPECT_THAT(client_->cancel_run(run_id, "through the pooler"), IsOkAndHolds(true));
  EXPECT_TRUE(wait_for([&] { return holders.stopped.load() == 8; }))
      << holders.stopped.load() << " of 8 stop tokens fired";
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->get_run(run_id));
  EXPECT_TRUE(run.cancelled());
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(holders.started.load(), 8) << "nothing of the cancelled run started afterwards";
}

TEST_P(PooledWorkerTest, ATaskPastItsDeadlineFailsAsTimedOut) {
  auto flow = Flow<"plDeadline", int>({.max_attempts = 1})
                  .step<"slow">([](int x, Context& ctx) -> absl::StatusOr<int> {
                    if (!wait_for([&ctx] { return ctx.stop_token().stop_requested(); })) return x;
                    return absl::CancelledError("gave up");
                  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  // The DSL refuses timeouts under 3 s: lowered in the database, where claims read it.
  ASSERT_EQ(sql("update pgflow.steps set opt_timeout = 1 where flow_slug = 'plDeadline' "
                "returning 't'"),
            "t");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              client_->wait_for_run(run_id, std::chrono::seconds(60)));
  EXPECT_EQ(run.status, RunStatus::kFailed);
  EXPECT_THAT(run.step("slow")->error_message.value_or(""),
              HasSubstr("exceeded its timeout of 1 s"));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_P(PooledWorkerTest, StallRecoveryRequeuesTheTaskOfAVanishedWorkerAndItRuns) {
  // Compiled by a first worker, stopped at once.
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w,
                                EdgeWorker::start(testing::worker_flows::sequential, config()));
    w.stop();
    ASSERT_THAT(w.wait(), IsOk());
  }
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                              client_->start_run(testing::worker_flows::sequential, 10));
  // A worker that vanished after starting the first task, an hour ago.
  const std::string queue = sql(
      "select queue_name from pgflow.steps where flow_slug = 'wSequential' and step_slug = 'a'");
  ASSERT_EQ(sql("select count(*) from pgflow.start_tasks('wSequential', "
                "array(select m.msg_id from pgmq.read($1, 3600, 1) m), "
                "(pgflow_tests.ensure_worker($1)).worker_id)",
                {queue}),
            "1");
  ASSERT_EQ(sql("update pgflow.step_tasks set queued_at = now() - interval '2 hours', "
                "started_at = now() - interval '1 hour' "
                "where run_id = $1::uuid and status = 'started' returning 't'",
                {run_id}),
            "t");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(testing::worker_flows::sequential, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              client_->wait_for_run(run_id, std::chrono::seconds(60)));
  EXPECT_EQ(run.status, RunStatus::kCompleted);
  EXPECT_EQ(run.output.value_or(nullptr)["c"], (10 + 1) * 2 + 3);
  EXPECT_TRUE(logs_.contains("stall recovery requeued tasks"));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

std::string wake_up_name(const ::testing::TestParamInfo<WakeUps>& mode) {
  return mode.param == WakeUps::kPollOnly ? "PollOnly" : "DirectListen";
}
INSTANTIATE_TEST_SUITE_P(WakeUps, PooledWorkerTest,
                         ::testing::Values(WakeUps::kPollOnly, WakeUps::kDirectListen),
                         wake_up_name);

// The connection budget, seen from the server (directly, to count backends): a poll-only worker
// with max_connections N holds N connections once every role has used its own (the fan-in
// step reads the run input, the run inputs' role), runs the flow as with four, and says N in
// its startup line.
TEST_F(PoolerTest, APollOnlyWorkerHoldsNoMoreConnectionsThanItsBudget) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(Client client, Client::connect({.connection_string = pooled_}));
  for (int budget = 1; budget <= 3; ++budget) {
    LogRecorder logs;
    WorkerConfig c = test_worker_config(db_->url(), &logs);
    c.poll_only = true;
    c.max_connections = budget;
    c.function_name = absl::StrCat("budget-", budget);
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                                EdgeWorker::start(testing::worker_flows::fan_in, c));
    EXPECT_TRUE(logs.contains("worker started"));
    for (const LogRecorder::Entry& e : logs.entries()) {
      if (e.message == "worker started") {
        EXPECT_THAT(e.text(), ::testing::HasSubstr(absl::StrCat(" connections=", budget)));
      }
    }
    for (int i = 0; i < 3; ++i) {
      PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                                  client.start_run(testing::worker_flows::fan_in, i));
      PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                                  client.wait_for_run(run_id, std::chrono::seconds(60)));
      EXPECT_EQ(run.output.value_or(nullptr)["join"], (i + 1) * (i + 2) + i) << budget;
    }
    // (The previous worker's backends may take a moment to go.)
    EXPECT_THAT(pgflow::testing::wait_until(
                    *conn_,
                    "select count(*) = $1::int from pg_stat_activity where datname = "
                    "current_database() and application_name like 'pgflow-worker%'",
                    {std::to_string(budget)}),
                IsOk())
        << "budget " << budget << ": "
        << sql("select string_agg(application_name, ', ') from pg_stat_activity "
               "where datname = current_database() and application_name like 'pgflow-worker%'");
    worker.stop();
    ASSERT_THAT(worker.wait(), IsOk());
  }
}

// Idle, a poll-only worker does not claim at each poll: it looks at its queue
// (pgflow.has_visible_work, through the pooler) and claims once a look finds the new run's task.
TEST_F(PoolerTest, AnIdlePollOnlyWorkerLooksAtItsQueueAndClaimsWhatALookFinds) {
  std::atomic<int> claims{0}, looks_empty{0}, looks_found{0};
  WorkerConfig c = test_worker_config(pooled_);
  c.poll_only = true;
  c.poll_interval = std::chrono::milliseconds(100);
  c.metrics = [&](const WorkerMetric& m) {
    if (m.kind == WorkerMetric::Kind::kClaimLatency) ++claims;
    if (m.kind == WorkerMetric::Kind::kLooked) ++(m.value > 0 ? looks_found : looks_empty);
  };
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(testing::worker_flows::fan_in, c));
  ASSERT_TRUE(wait_for([&] { return looks_empty.load() >= 5; }));
  EXPECT_EQ(claims.load(), 1) << "one claim found the queue empty; every poll since looked";
  EXPECT_EQ(looks_found.load(), 0);

  PGFLOW_ASSERT_OK_AND_ASSIGN(Client client, Client::connect({.connection_string = pooled_}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                              client.start_run(testing::worker_flows::fan_in, 2));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client.wait_for_run(run_id, std::chrono::seconds(60)));
  EXPECT_EQ(run.output.value_or(nullptr)["join"], 3 * 4 + 2);
  EXPECT_GE(looks_found.load(), 1) << "the run's first task was found by a look";
  EXPECT_GE(claims.load(), 2);
  worker.stop();
  ASSERT_THAT(worker.wait(), IsOk());
}

TEST_F(PoolerTest, ASubscriptionOfAPollOnlyClientIsRefusedWithWhatToSet) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(Client client,
                              Client::connect({.connection_string = pooled_, .poll_only = true}));
  absl::StatusOr<Subscription> subscription = client.subscribe([](const RunEvent&) {});
  EXPECT_EQ(subscription.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(subscription.status().message(), HasSubstr("listen_connection_string"));
  EXPECT_EQ(
      Client::connect(
          {.connection_string = pooled_, .listen_connection_string = db_->url(), .poll_only = true})
          .status()
          .code(),
      absl::StatusCode::kInvalidArgument)
      << "a client either LISTENs or polls";
}

TEST_F(PoolerTest, TheCliStartsARunAndWaitsForItPollOnly) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(testing::worker_flows::sequential, [&] {
                                WorkerConfig c = test_worker_config(pooled_);
                                c.poll_only = true;
                                return c;
                              }()));
  CommandResult done = run_command(absl::StrCat(PGFLOW_CLI_BIN,
                                                " start wSequential --input 4 --wait --json "
                                                "--poll-only --database ",
                                                shell_quote(pooled_)));
  ASSERT_EQ(done.exit_code, 0) << done.err;
  const nlohmann::json run = nlohmann::json::parse(done.out);
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], nlohmann::json({{"c", 13}}));
  CommandResult shown =
      run_command(absl::StrCat(PGFLOW_CLI_BIN, " run show ", run["run_id"].get<std::string>(),
                               " --database ", shell_quote(pooled_)));
  EXPECT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, HasSubstr("completed"));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

// migrate keeps nothing in its session (each step a transaction under a transaction-scoped
// lock): it installs through the pooler, and two migrators at once take turns.
TEST(PoolerMigrateTest, TwoMigratorsThroughThePoolerInstallTheSchemaOnce) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string url, pooled_url(db));
  absl::Status first, second;
  {
    std::jthread a([&] { first = migrate(url); });
    std::jthread b([&] { second = migrate(url); });
  }
  EXPECT_THAT(first, IsOk());
  EXPECT_THAT(second, IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(url));
  EXPECT_TRUE(status.pending.empty());
  EXPECT_EQ(status.applied.size(), bundled_migrations().size()) << "each migration once";
}

}  // namespace
}  // namespace pgflow
