// EdgeWorker against the real embedded PostgreSQL: typed flows run end to end by real
// workers, failures, several workers, fatal claims, startup refusals, resources.
#include "pgflow/worker.h"

#include <atomic>
#include <chrono>
#include <map>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "testing/database_test.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"
#include "testing/worker_flows.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::LogRecorder;
using pgflow::testing::query_text;
using pgflow::testing::start_run;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::TestDatabase;
using pgflow::testing::wait_for;
using pgflow::testing::wait_for_run;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace wf = pgflow::testing::worker_flows;

class WorkerTest : public pgflow::testing::DatabaseTest {
 protected:
  WorkerConfig config() { return test_worker_config(db_->url(), &logs_); }

  // The run's state once it ended; fails the test if it does not end.
  json run_to_end(const std::string& run_id) {
    auto run = wait_for_run(*conn_, run_id);
    EXPECT_THAT(run, IsOk());
    return run.ok() ? *run : json();
  }
  std::string sql(const std::string& q, const std::vector<pg::Param>& p = {}) {
    auto r = query_text(*conn_, q, p);
    EXPECT_THAT(r, IsOk()) << q;
    return r.ok() ? *r : "";
  }
  // The number of this database's worker connections.
  static std::string worker_connections() {
    return "select count(*) from pg_stat_activity where datname = current_database() "
           "and application_name like 'pgflow-worker-%'";
  }
  static json step(const json& run, const std::string& slug) {
    for (const auto& s : run["steps"]) {
      if (s["step_slug"] == slug) return s;
    }
    return json();
  }

  LogRecorder logs_;
};

TEST_F(WorkerTest, RunsASequentialFlowToCompletion) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"c", 7}}));  // ((1 + 1) * 2) + 3
  EXPECT_EQ(step(run, "b")["output"], 4);
}

TEST_F(WorkerTest, RunsAFanInWithLazyRunInput) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::fan_in, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wFanIn", 10));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"join", 11 * 12 + 10}}));
}

TEST_F(WorkerTest, RunsRootAndDependentMapsInTaskOrder) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::maps, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wMaps", json{1, 2, 3, 4}));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(step(run, "square")["output"], json({1, 4, 9, 16}));
  EXPECT_EQ(step(run, "half")["output"], json({0, 2, 4, 8}));
  EXPECT_EQ(run["run"]["output"], json({{"sum", 14}}));
}

TEST_F(WorkerTest, AMapOverAnEmptyArrayCompletesWithoutTasks) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::maps, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wMaps", json::array()));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(step(run, "half")["output"], json::array());
  EXPECT_EQ(run["run"]["output"], json({{"sum", 0}}));
  EXPECT_EQ(
      sql("select count(*) from pgflow.step_tasks where run_id = $1::uuid and step_slug <> 'sum'",
          {run_id}),
      "0");
}

TEST_F(WorkerTest, SkipAndSkipCascadeConditions) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::conditional, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string plain,
                              start_run(*conn_, "wConditional", json{{"vip", false}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      std::string vip, start_run(*conn_, "wConditional", json{{"vip", true}, {"audit", true}}));
  json run = run_to_end(plain);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(step(run, "vip")["skip_reason"], "condition_unmet");
  EXPECT_EQ(step(run, "audit")["skip_reason"], "condition_unmet");
  EXPECT_EQ(step(run, "archive")["skip_reason"], "dependency_skipped");
  EXPECT_EQ(run["run"]["output"], json({{"report", "none"}}));

  json full = run_to_end(vip);
  EXPECT_EQ(full["run"]["status"], "completed");
  EXPECT_EQ(full["run"]["output"], json({{"report", "gift"}, {"archive", 2}}));
}

TEST_F(WorkerTest, RetriesAFailingHandlerUntilItSucceeds) {
  std::mutex mu;
  std::map<WorkerMetric::Kind, double> totals;
  WorkerConfig c = config();
  c.metrics = [&](const WorkerMetric& m) {
    std::lock_guard<std::mutex> lock(mu);
    totals[m.kind] += m.value;
  };
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::flaky, c));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wFlaky", 4));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"flaky", 40}}));
  EXPECT_EQ(sql("select attempts_count::text || '/' || status from pgflow.step_tasks where run_id "
                "= $1::uuid",
                {run_id}),
            "3/completed");
  worker.stop();
  ASSERT_THAT(worker.wait(), IsOk());
  std::lock_guard<std::mutex> lock(mu);
  EXPECT_EQ(totals[WorkerMetric::Kind::kClaimed], 3);
  EXPECT_EQ(totals[WorkerMetric::Kind::kRetried], 2);
  EXPECT_EQ(totals[WorkerMetric::Kind::kCompleted], 1);
  EXPECT_EQ(totals[WorkerMetric::Kind::kFailed], 0);
  EXPECT_GT(totals[WorkerMetric::Kind::kHandlerTime], 0);
}

TEST_F(WorkerTest, ExhaustedRetriesFollowWhenExhausted) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker fail_worker,
                              EdgeWorker::start(wf::exhaust_fail, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker skip_worker,
                              EdgeWorker::start(wf::exhaust_skip, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker cascade_worker,
                              EdgeWorker::start(wf::exhaust_cascade, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string failed, start_run(*conn_, "wExhaustFail", 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string skipped, start_run(*conn_, "wExhaustSkip", 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string cascaded, start_run(*conn_, "wExhaustCascade", 5));

  json f = run_to_end(failed);
  EXPECT_EQ(f["run"]["status"], "failed");
  EXPECT_EQ(step(f, "boom")["error_message"], "boom failed");

  json s = run_to_end(skipped);
  EXPECT_EQ(s["run"]["status"], "completed");
  EXPECT_EQ(step(s, "boom")["skip_reason"], "handler_failed");
  EXPECT_EQ(step(s, "boom")["error_message"], "thrown");  // an exception's what()
  EXPECT_EQ(s["run"]["output"], json({{"after", 0}}));    // ran without the skipped input

  json c = run_to_end(cascaded);
  EXPECT_EQ(c["run"]["status"], "completed");
  EXPECT_EQ(step(c, "after")["skip_reason"], "dependency_skipped");
  EXPECT_EQ(c["run"]["output"], json({{"other", 5}}));
}

TEST_F(WorkerTest, StartDelayHoldsTheFirstMessage) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::delayed, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wDelayed", 3));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["output"], json({{"later", 3}}));
  EXPECT_EQ(sql("select started_at >= queued_at + interval '1 second' from pgflow.step_tasks "
                "where run_id = $1::uuid",
                {run_id}),
            "t");
}

TEST_F(WorkerTest, ASlowHandlerPastItsTimeoutRunsOnceAndItsResultCounts) {
  std::atomic<int> calls{0};
  std::atomic<bool> deferred{false};
  auto slow = Flow<"wSlow", int>({.timeout = 3}).step<"slow">([&](int x, Context& ctx) {
    ++calls;
    // Runs until its message became visible again (the step timeout, tuned to 1 s below, plus
    // the claim margin of 2 s) and a poll read it and deferred it instead of running it twice.
    deferred = logs_.wait_for_text("outcome=deferred");
    return x + static_cast<int>(ctx.deadline() > std::chrono::system_clock::time_point{});
  });
  WorkerConfig c = config();
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(slow, c));
  ASSERT_EQ(sql("update pgflow.steps set opt_timeout = 1 where flow_slug = 'wSlow' returning 't'"),
            "t");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSlow", 1));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(sql("select attempts_count from pgflow.step_tasks where run_id = $1::uuid", {run_id}),
            "1");
  EXPECT_TRUE(deferred.load());  // while it ran, its message was read and deferred
}

TEST_F(WorkerTest, SeveralWorkersCompleteEveryTaskExactlyOnce) {
  std::mutex mu;
  std::multiset<int> seen;
  auto work = Flow<"wMany", std::vector<int>>().map<"work">([&](int x) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    std::lock_guard<std::mutex> lock(mu);
    seen.insert(x);
    return x;
  });
  std::vector<EdgeWorker> workers;
  for (int i = 0; i < 3; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(work, config()));
    workers.push_back(std::move(w));
  }
  json input = json::array();
  for (int i = 0; i < 90; ++i) input.push_back(i);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wMany", input));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(step(run, "work")["output"], input);
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(seen.size(), 90u);
    for (int i = 0; i < 90; ++i) EXPECT_EQ(seen.count(i), 1u) << "element " << i;
  }
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1::uuid "
                "and status = 'completed' and attempts_count = 1",
                {run_id}),
            "90");
}

TEST_F(WorkerTest, AFatalClaimStopsTheWorkerWithoutTouchingTasks) {
  // A run waits in the queue next to a pgflow-shaped message that has no task.
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker first, EdgeWorker::start(wf::sequential, config()));
  first.stop();
  ASSERT_THAT(first.wait(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  const std::string bogus = sql(
      "select pgmq.send('wsequential', jsonb_build_object('flow_slug', 'wSequential', 'run_id', "
      "gen_random_uuid(), 'step_slug', 'a', 'task_index', 0, 'note', 'body-marker-xyz'))::text");

  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  absl::Status why = worker.wait();
  EXPECT_THAT(why, StatusIs(absl::StatusCode::kFailedPrecondition,
                            AllOf(HasSubstr("wsequential"), HasSubstr(bogus),
                                  HasSubstr("resume_worker_function"))));
  EXPECT_EQ(
      sql("select status || '/' || attempts_count from pgflow.step_tasks where run_id = $1::uuid",
          {run_id}),
      "queued/0");
  EXPECT_EQ(sql("select count(*) from pgmq.q_wsequential where vt <= clock_timestamp()"), "2");
  EXPECT_EQ(sql("select count(*) from pgmq.a_wsequential"), "0");
  EXPECT_EQ(sql("select paused_at is not null from pgflow.worker_functions where function_name = "
                "'wSequential-worker'"),
            "t");
  int errors = 0;
  for (const auto& e : logs_.entries()) {
    EXPECT_THAT(e.text(), ::testing::Not(HasSubstr("body-marker-xyz")));
    if (e.level == LogLevel::kError) ++errors;
  }
  EXPECT_EQ(errors, 1);

  // Paused: a restart is refused until an operator resumes the function.
  EXPECT_THAT(EdgeWorker::start(wf::sequential, config()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("paused")));
  ASSERT_EQ(sql("select pgmq.delete('wsequential', $1::bigint)::text", {bogus}), "true");
  ASSERT_EQ(sql("select pgflow.resume_worker_function('wSequential-worker')::text"), "");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker resumed, EdgeWorker::start(wf::sequential, config()));
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
}

// `pgflow workers pause` stops a running worker's claims (schema 0026): it goes on reading (the
// message's read count grows), claims nothing and runs nothing, and the task stays queued
// until the function is resumed; then the run completes.
TEST_F(WorkerTest, APausedFunctionsRunningWorkerClaimsNothingUntilResumed) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  const std::string function = sql("select function_name from pgflow.workers limit 1");
  sql("select pgflow._pause_worker_function($1, 'operator: bad release')", {function});
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  ASSERT_THAT(wait_until(*conn_,
                         "select q.read_ct >= 2 from pgmq.q_wsequential q join pgflow.step_tasks t "
                         "on t.message_id = q.msg_id where t.run_id = $1::uuid",
                         {run_id}),
              IsOk())
      << "the worker read the task's message (twice) while paused";
  EXPECT_EQ(sql("select status || ' ' || attempts_count from pgflow.step_tasks "
                "where run_id = $1::uuid",
                {run_id}),
            "queued 0");
  sql("select pgflow.resume_worker_function($1)", {function});
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

// A worker whose row is deleted (pruned while it could not beat) registers again at its next
// heartbeat and goes on claiming: without the row its claims are refused ("not registered").
TEST_F(WorkerTest, AWorkerWhoseRowWasDeletedRegistersAgainAndGoesOn) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  const std::string id = sql("select worker_id::text from pgflow.workers");
  sql("delete from pgflow.workers where worker_id = $1::uuid", {id});
  ASSERT_THAT(wait_until(*conn_,
                         "select exists (select 1 from pgflow.workers "
                         "where worker_id = $1::uuid and stopped_at is null)",
                         {id}),
              IsOk());
  EXPECT_TRUE(logs_.wait_for_text("registered again"));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(WorkerTest, ForeignMessagesAreArchivedWithAWarning) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  const std::string foreign =
      sql("select pgmq.send('wsequential', '{\"hello\": \"world\"}')::text");
  ASSERT_THAT(
      wait_until(*conn_, "select count(*) = 1 from pgmq.a_wsequential where msg_id = $1::bigint",
                 {foreign}),
      IsOk());
  // The worker logs its warning after the claim commits, so the archive can be seen first:
  // wait for the log entry itself.
  ASSERT_TRUE(logs_.wait_for_text("msg_id=" + foreign));
  bool warned = false;
  for (const auto& e : logs_.entries()) {
    if (e.level == LogLevel::kWarn && e.text().find("msg_id=" + foreign) != std::string::npos)
      warned = true;
  }
  EXPECT_TRUE(warned);
  // The worker carries on.
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
  EXPECT_TRUE(worker.running());
}

TEST_F(WorkerTest, RefusesADatabaseWithoutQueueIdentity) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase old, TestDatabase::empty());
  ASSERT_THAT(migrate(old.url(), {.target_version = 1}), IsOk());
  WorkerConfig c = test_worker_config(old.url(), &logs_);
  EXPECT_THAT(EdgeWorker::start(wf::sequential, c),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("pgflow migrate")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection old_conn, pg::Connection::open(old.url()));
  absl::StatusOr<std::string> workers = query_text(old_conn, "select count(*) from pgflow.workers");
  ASSERT_THAT(workers, IsOk());
  EXPECT_EQ(*workers, "0");
}

TEST_F(WorkerTest, RefusesADatabaseOlderThanItsProtocol) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase old, TestDatabase::empty());
  ASSERT_THAT(migrate(old.url(), {.target_version = 3}), IsOk());  // protocol 2: no step queues
  EXPECT_THAT(
      EdgeWorker::start(wf::sequential, test_worker_config(old.url(), &logs_)),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("speaks worker protocol 2"), HasSubstr("upgrade the database"))));
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection old_conn, pg::Connection::open(old.url()));
  absl::StatusOr<std::string> flows = query_text(old_conn, "select count(*) from pgflow.flows");
  ASSERT_THAT(flows, IsOk());
  EXPECT_EQ(*flows, "0") << "nothing was compiled";
}

// A worker whose transactions would not run at READ COMMITTED would leave the held tasks of
// concurrency limits held forever (docs/flow-control.md, "Isolation"): it refuses to start.
TEST_F(WorkerTest, RefusesToRunOutsideReadCommitted) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase other, TestDatabase::from_template());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(other.url()));
  ASSERT_THAT(conn.exec("do $$ begin execute format('alter database %I set "
                        "default_transaction_isolation = ''repeatable read''', "
                        "current_database()); end $$"),
              IsOk());
  EXPECT_THAT(
      EdgeWorker::start(wf::sequential, test_worker_config(other.url(), &logs_)),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("repeatable read"), HasSubstr("default_transaction_isolation"))));
  absl::StatusOr<std::string> flows = query_text(conn, "select count(*) from pgflow.flows");
  ASSERT_THAT(flows, IsOk());
  EXPECT_EQ(*flows, "0") << "nothing was compiled";
}

TEST_F(WorkerTest, AMismatchedFlowIsRefusedOutsideLocalDevelopment) {
  // The database knows another definition of wSequential (only step a).
  auto other = Flow<"wSequential", int>().step<"a">([](int x) { return x; });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(other, config()));
  w.stop();
  ASSERT_THAT(w.wait(), IsOk());
  ASSERT_THAT(conn_->exec("alter database " + pg::quote_identifier(db_->name()) +
                          " set pgflow.local = off"),
              IsOk());
  EXPECT_THAT(EdgeWorker::start(wf::sequential, config()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("differs"), HasSubstr("Step count differs: 3 vs 1"))));
  EXPECT_EQ(sql("select count(*) from pgflow.workers where stopped_at is null"), "0");
}

// Concurrency limits are deployed beside the shape: another limit is a mismatch in production,
// named as such; a limit on a database older than 0018 says what to do, while a flow without
// limits still deploys there as before.
TEST_F(WorkerTest, AnotherConcurrencyLimitIsAMismatchOutsideLocalDevelopment) {
  auto limited = [](int limit) {
    return Flow<"wLimitedOnce", int>().step<"a">({.concurrency_limit = runtime(limit)},
                                                 [](int x) { return x; });
  };
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(limited(2), config()));
  w.stop();
  ASSERT_THAT(w.wait(), IsOk());
  EXPECT_EQ(sql("select step_limit from pgflow.step_concurrency_limits "
                "where flow_slug = 'wLimitedOnce' and step_slug = 'a'"),
            "2");
  ASSERT_THAT(conn_->exec("alter database " + pg::quote_identifier(db_->name()) +
                          " set pgflow.local = off"),
              IsOk());
  EXPECT_THAT(EdgeWorker::start(limited(3), config()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("differs from this worker's concurrency limits"),
                             HasSubstr("Concurrency limit of step 'a' differs: 3 vs 2"))));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker same, EdgeWorker::start(limited(2), config()));
  EXPECT_TRUE(same.running());
}

TEST_F(WorkerTest, AConcurrencyLimitOnASchemaBefore0018SaysToMigrate) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase old, TestDatabase::empty());
  ASSERT_THAT(migrate(old.url(), {.target_version = 17}), IsOk());
  auto limited =
      Flow<"wLimitedOld", int>().step<"a">({.concurrency_limit = 4}, [](int x) { return x; });
  EXPECT_THAT(EdgeWorker::start(limited, test_worker_config(old.url(), &logs_)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("\"wLimitedOld\" has concurrency limits"),
                             HasSubstr("schema 0018"), HasSubstr("pgflow migrate"))));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker unlimited,
                              EdgeWorker::start(wf::sequential, test_worker_config(old.url())));
  EXPECT_TRUE(unlimited.running());
}

// Schema 0018 has limits but no keys: a keyed flow says to migrate instead of showing the
// schema's refusal of an unknown option.
TEST_F(WorkerTest, AConcurrencyKeyOnASchemaBefore0019SaysToMigrate) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase old, TestDatabase::empty());
  ASSERT_THAT(migrate(old.url(), {.target_version = 18}), IsOk());
  auto keyed = Flow<"wKeyedOld", int>().step<"a">(
      {.concurrency_limit = 4, .concurrency_key = {.path = "tenant"}}, [](int x) { return x; });
  EXPECT_THAT(EdgeWorker::start(keyed, test_worker_config(old.url(), &logs_)),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("\"wKeyedOld\" has a concurrency key"),
                             HasSubstr("schema 0019"), HasSubstr("pgflow migrate"))));
  auto limited =
      Flow<"wLimitedOld", int>().step<"a">({.concurrency_limit = 4}, [](int x) { return x; });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w,
                              EdgeWorker::start(limited, test_worker_config(old.url())));
  EXPECT_TRUE(w.running());
}

TEST_F(WorkerTest, LocalDevelopmentRecompilesAChangedFlow) {
  auto other = Flow<"wSequential", int>().step<"a">([](int x) { return x; });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(other, config()));
  w.stop();
  ASSERT_THAT(w.wait(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, config()));
  EXPECT_TRUE(logs_.contains("recompiled"));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wSequential", 1));
  EXPECT_EQ(run_to_end(run_id)["run"]["output"], json({{"c", 7}}));
}

// Stall recovery runs one pass at a time under a row lock only pgflow's owner can take (it was
// an advisory lock any login could hold, turning recovery off silently). A session that holds
// it for several intervals is named in a warning.
TEST_F(WorkerTest, StallRecoveryHeldElsewhereIsReportedWithItsHolder) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection holder,
                              pg::Connection::open(db_->url(), "stall-lock-holder"));
  ASSERT_THAT(holder.exec("begin").status(), IsOk());
  ASSERT_THAT(
      holder.exec("select 1 from pgflow.locks where lock_name = 'stall_recovery' for update")
          .status(),
      IsOk());
  const std::string holder_pid =
      std::string(holder.exec("select pg_backend_pid()::text")->scalar());

  WorkerConfig c = config();
  c.stall_recovery_interval = std::chrono::milliseconds(100);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, c));
  ASSERT_TRUE(logs_.wait_for_text("stall recovery has been skipped"));
  bool named = false;
  for (const auto& e : logs_.entries()) {
    if (e.level == LogLevel::kWarn &&
        e.message.find("stall recovery has been skipped") != std::string::npos) {
      EXPECT_THAT(e.text(), AllOf(HasSubstr("pid " + holder_pid), HasSubstr("stall-lock-holder")));
      named = true;
    }
  }
  EXPECT_TRUE(named);
  // Once the holder lets go, a pass runs and records when it ended.
  ASSERT_THAT(holder.exec("rollback").status(), IsOk());
  EXPECT_THAT(wait_until(*conn_,
                         "select last_completed_at is not null from pgflow.locks "
                         "where lock_name = 'stall_recovery'"),
              IsOk());
  EXPECT_TRUE(worker.running());
}

// An advisory lock on the keys pgflow used before schema 0012, held by a login without any
// grant, no longer stops stall recovery.
TEST_F(WorkerTest, AStrangersAdvisoryLockDoesNotStopStallRecovery) {
  ASSERT_THAT(conn_->exec("drop role if exists stall_stranger").status(), IsOk());
  ASSERT_THAT(conn_->exec("create role stall_stranger login").status(), IsOk());
  auto drop_role =
      absl::MakeCleanup([this] { (void)conn_->exec("drop role if exists stall_stranger"); });
  std::string stranger_url = db_->url();
  stranger_url.replace(stranger_url.find("postgres@"), 9, "stall_stranger@");
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection stranger, pg::Connection::open(stranger_url));
    ASSERT_THAT(
        stranger.exec("select pg_advisory_lock(1, hashtext('pgflow.requeue_stalled_tasks'))")
            .status(),
        IsOk());
    WorkerConfig c = config();
    c.stall_recovery_interval = std::chrono::milliseconds(100);
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, c));
    EXPECT_THAT(wait_until(*conn_,
                           "select last_completed_at is not null from pgflow.locks "
                           "where lock_name = 'stall_recovery'"),
                IsOk());
    worker.stop();
    EXPECT_THAT(worker.wait(), IsOk());
  }
}

TEST_F(WorkerTest, ADeprecatedWorkerDrainsAndStops) {
  // The handler is in flight when the worker is deprecated: the worker claims nothing more, lets
  // the handler finish on its own (its stop token never fires: a deploy must not cost an attempt),
  // reports its result and stops.
  std::atomic<bool> running{false};
  std::atomic<bool> release{false};
  std::atomic<bool> stop_fired{true};
  auto flow = Flow<"wDrain", int>().step<"hold">([&](int x, Context& ctx) {
    running = true;
    wait_for([&release] { return release.load(); });
    stop_fired = ctx.stop_token().stop_requested();
    return x + 1;
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wDrain", 1));
  ASSERT_THAT(
      wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                 {run_id}),
      IsOk());
  ASSERT_EQ(sql("update pgflow.workers set deprecated_at = now() where worker_id = $1::uuid "
                "returning 't'",
                {worker.worker_id()}),
            "t");
  ASSERT_TRUE(logs_.wait_for_text("worker deprecated by an operator"));
  // Claims have ended (the log follows the drain's start): new work waits for other workers.
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string later_run, start_run(*conn_, "wDrain", 10));
  EXPECT_TRUE(worker.running()) << "the worker waits for its handler";
  release = true;
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_TRUE(running.load());
  EXPECT_FALSE(stop_fired.load()) << "draining does not ask handlers to stop";
  // The in-flight task's result was reported before the worker stopped.
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"hold", 2}}));
  EXPECT_EQ(sql("select attempts_count from pgflow.step_tasks where run_id = $1::uuid", {run_id}),
            "1");
  EXPECT_EQ(sql("select status || ' ' || coalesce(last_worker_id::text, 'none') "
                "from pgflow.step_tasks where run_id = $1::uuid",
                {later_run}),
            "queued none")
      << "the draining worker claimed nothing new";
  EXPECT_EQ(sql("select stopped_at is not null from pgflow.workers where worker_id = $1::uuid",
                {worker.worker_id()}),
            "t");
}

TEST_F(WorkerTest, AStopDuringADrainStopsTheHandlersAsAnyStop) {
  pgflow::testing::Holders holders;
  auto flow = Flow<"wDrainStop", int>().step<"hold">(
      [&holders](int x, Context& ctx) { return holders.hold(x, ctx); });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wDrainStop", 1));
  ASSERT_TRUE(wait_for([&holders] { return holders.started.load() == 1; }));
  ASSERT_EQ(sql("update pgflow.workers set deprecated_at = now() where worker_id = $1::uuid "
                "returning 't'",
                {worker.worker_id()}),
            "t");
  ASSERT_TRUE(logs_.wait_for_text("worker deprecated by an operator"));
  EXPECT_EQ(holders.stopped.load(), 0) << "draining stops no handler";
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(holders.stopped.load(), 1) << "stop() during the drain fires the token as always";
}

// A root map gets no run input from the claim, so `total` loads it lazily: every one of the
// worker's connections (poller, reporter, heartbeat, inputs) gets used.
const auto kConnections =
    Flow<"wConnections", std::vector<int>>()
        .map<"square">([](int x) { return x * x; })
        .step<"total">(pgflow::after<"square">, [](const std::vector<int>& sq, Context& ctx) {
          absl::StatusOr<std::vector<int>> input = ctx.flow_input<std::vector<int>>();
          return static_cast<int>(sq.size() + (input.ok() ? input->size() : 100));
        });

TEST_F(WorkerTest, UsesAtMostFourConnections) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kConnections, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wConnections", json{1, 2}));
  EXPECT_EQ(run_to_end(run_id)["run"]["output"], json({{"total", 4}}));
  ASSERT_THAT(wait_until(*conn_, "select (" + worker_connections() + ") = 4"),
              IsOk());  // heartbeat too
  // Another run reuses them: the same four backends, none opened (and closed) in between.
  const std::string backends_sql =
      "select array_agg(pid order by pid)::text from pg_stat_activity where datname = "
      "current_database() and application_name like 'pgflow-worker-%'";
  const std::string backends = sql(backends_sql);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string again, start_run(*conn_, "wConnections", json{3}));
  EXPECT_EQ(run_to_end(again)["run"]["output"], json({{"total", 2}}));
  EXPECT_EQ(sql(worker_connections()), "4");
  EXPECT_EQ(sql(backends_sql), backends);
  // A stopped worker whose handle is kept holds none (they would hold pooler slots, and LISTEN
  // without reading).
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_THAT(wait_until(*conn_, "select (" + worker_connections() + ") = 0"), IsOk());
}

TEST_F(WorkerTest, AStoppedWorkerClosesItsSharedConnections) {
  WorkerConfig c = config();
  c.max_connections = 2;  // the roles take turns on two connections (so no LISTEN: poll-only)
  c.poll_only = true;
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kConnections, c));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wConnections", json{1, 2}));
  EXPECT_EQ(run_to_end(run_id)["run"]["output"], json({{"total", 4}}));
  EXPECT_EQ(sql("select (" + worker_connections() + ") <= 2"), "t");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_THAT(wait_until(*conn_, "select (" + worker_connections() + ") = 0"), IsOk());
}

// Idle, a worker reads its queue once per new-work announcement and otherwise only every
// poll_interval (here an hour): it does not spin. Each wake-up is sent only after the previous
// read was counted, so the count is exact however fast the machine is.
TEST_F(WorkerTest, AnIdleWorkerReadsOncePerWakeUp) {
  std::atomic<int> reads{0};
  WorkerConfig c = config();
  c.poll_interval = std::chrono::hours(1);
  c.metrics = [&reads](const WorkerMetric& m) {
    if (m.kind == WorkerMetric::Kind::kClaimLatency) ++reads;
  };
  auto reads_reach = [&reads](int n) {
    return wait_for([&reads, n] { return reads.load() >= n; });
  };
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(wf::sequential, c));
  ASSERT_TRUE(reads_reach(1));  // the read at start found nothing
  const std::string channel =
      "pgflow_queue:" +
      sql("select queue_name from pgflow.steps where flow_slug = 'wSequential' limit 1");
  for (int n = 2; n <= 4; ++n) {
    ASSERT_THAT(conn_->exec("select pg_notify($1, '')", {channel}), IsOk());
    ASSERT_TRUE(reads_reach(n)) << "wake-up " << n - 1 << " did not lead to a read";
  }
  // The one wall-clock wait: a spinning worker would read many more times in this window; a
  // correct one reads no more however long it is.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  EXPECT_EQ(reads.load(), 4);
  EXPECT_EQ(sql("select (" + worker_connections() + ") <= 4"), "t");
}

TEST_F(WorkerTest, LogsCarryIdsButNeverInputsOrOutputs) {
  auto echo = Flow<"wEcho", json>().step<"echo">([](const json& in) { return in; });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(echo, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                              start_run(*conn_, "wEcho", json{{"password", "topsecret-value"}}));
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
  bool saw_task_line = false;
  for (const auto& e : logs_.entries()) {
    EXPECT_THAT(e.text(), ::testing::Not(HasSubstr("topsecret-value")));
    if (e.text().find("run_id=" + run_id) != std::string::npos) saw_task_line = true;
  }
  EXPECT_TRUE(saw_task_line);
}

TEST_F(WorkerTest, AThrowingHandBuiltHandlerFailsTheAttemptInsteadOfTheProcess) {
  FlowDefinition def;
  def.slug = "wHandBuilt";
  def.options.max_attempts = 1;
  def.steps.push_back(
      StepDefinition{.slug = "boom", .handler = [](const json&, Context&) -> absl::StatusOr<json> {
                       throw std::runtime_error("hand-built handler threw");
                     }});
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(def, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wHandBuilt", 1));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "failed");
  EXPECT_EQ(step(run, "boom")["error_message"], "hand-built handler threw");
  EXPECT_TRUE(worker.running());
}

TEST_F(WorkerTest, OutputsWithInvalidUtf8FailTheAttemptNotTheWorker) {
  // jsonb holds UTF-8 only: the attempt fails naming the problem rather than storing other text
  // (docs/errors.md, "Hostile input"; tests/integration/hostile_input_test.cc has every case).
  auto bytes = Flow<"wBytes", int>({.max_attempts = 1}).step<"raw">([](int) {
    return std::string("ok \xff\xfe end");
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(bytes, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wBytes", 1));
  json run = run_to_end(run_id);
  EXPECT_EQ(run["run"]["status"], "failed");
  EXPECT_EQ(step(run, "raw")["error_message"],
            "flow \"wBytes\", step \"raw\": cannot convert the handler's result to JSON: the "
            "result holds a "
            "string that is not valid UTF-8 (byte 0xff at byte 3) at the top level (permanent: not "
            "retried)");
  EXPECT_TRUE(worker.running());
}

TEST(WorkerConfigTest, RejectsBadValuesNamingTheField) {
  WorkerConfig c;
  c.connection_string = "postgresql://nowhere/db";
  c.max_concurrent = 0;
  c.batch_size = 5000;
  EXPECT_THAT(EdgeWorker::start(wf::sequential, c),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("max_concurrent"), HasSubstr("batch_size"))));
}

}  // namespace
}  // namespace pgflow
