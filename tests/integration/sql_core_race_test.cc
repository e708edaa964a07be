// Races in the SQL core that pgTAP cannot express: several real connections calling the
// core's functions at the same moment. Each test checks the end state is the one a serial
// execution would give, and that no call failed (no deadlock, no constraint violation).
#include <algorithm>
#include <barrier>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "testing/database_test.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::TestDatabase;

constexpr char kWorker[] = "11111111-1111-1111-1111-111111111111";

class SqlCoreRace : public pgflow::testing::DatabaseTest {
 protected:
  void SetUp() override {
    DatabaseTest::SetUp();
    if (HasFatalFailure()) return;
    ASSERT_THAT(exec("select pgflow_tests.install_realtime_stub()"), IsOk());
  }

  absl::StatusOr<pg::Result> exec(const std::string& query, const std::vector<pg::Param>& p = {}) {
    return conn_->exec(query, p);
  }

  // Runs `body(i, connection)` on `n` threads, each with its own connection, released together.
  void concurrently(int n, const std::function<absl::Status(int, pg::Connection&)>& body) {
    std::vector<pg::Connection> conns;
    for (int i = 0; i < n; ++i) {
      auto c = pg::Connection::open(db_->url());
      ASSERT_TRUE(c.ok()) << c.status();
      conns.push_back(std::move(*c));
    }
    std::barrier start(n);
    std::vector<absl::Status> results(static_cast<size_t>(n));
    {
      std::vector<std::jthread> threads;
      for (int i = 0; i < n; ++i) {
        threads.emplace_back([&, i] {
          start.arrive_and_wait();
          results[static_cast<size_t>(i)] = body(i, conns[static_cast<size_t>(i)]);
        });
      }
    }
    for (const auto& r : results) EXPECT_THAT(r, IsOk());
  }

  // A flow `fan` with root map `each` over the run input, then `after` depending on it.
  std::string start_map_run(int elements, int max_attempts = 3,
                            const char* when_exhausted = "fail") {
    EXPECT_THAT(exec("select pgflow.create_flow('fan', max_attempts => $1::int, timeout => 60)",
                     {std::to_string(max_attempts)}),
                IsOk());
    EXPECT_THAT(
        exec("select pgflow.add_step('fan', 'each', step_type => 'map', when_exhausted => $1)",
             {when_exhausted}),
        IsOk());
    EXPECT_THAT(exec("select pgflow.add_step('fan', 'after', array['each'])"), IsOk());
    nlohmann::json input = nlohmann::json::array();
    for (int i = 0; i < elements; ++i) input.push_back(i);
    return sql("select run_id from pgflow.start_flow('fan', $1::jsonb)", {input.dump()});
  }

  std::vector<std::string> all_message_ids(const std::string& queue) {
    auto r = exec(absl::StrCat("select msg_id::text from pgmq.q_", queue, " order by msg_id"));
    std::vector<std::string> ids;
    if (r.ok()) {
      for (int i = 0; i < r->rows(); ++i) ids.emplace_back(r->text(i, 0));
    }
    return ids;
  }
};

std::string pg_array(const std::vector<std::string>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) out += (i ? "," : "") + ids[i];
  return out + "}";
}

TEST_F(SqlCoreRace, SiblingMapTasksCompletingAtOnceCompleteTheStepExactlyOnce) {
  constexpr int kTasks = 48;
  constexpr int kThreads = 8;
  std::string run_id = start_map_run(kTasks);
  ASSERT_THAT(exec("select pgflow_tests.ensure_worker('fan')"), IsOk());
  ASSERT_EQ(sql("select count(*) from pgflow.start_tasks('fan', $1::bigint[], $2::uuid)",
                {pg_array(all_message_ids("fan")), kWorker}),
            std::to_string(kTasks));

  // Thread i completes tasks i, i+8, i+16, ... in descending order, so completions of one
  // step interleave across connections and arrive out of task order.
  concurrently(kThreads, [&](int t, pg::Connection& c) -> absl::Status {
    for (int i = kTasks - kThreads + t; i >= 0; i -= kThreads) {
      auto r =
          c.exec("select pgflow.complete_task($1::uuid, 'each', $2::int, to_jsonb($2::int * 10))",
                 {run_id, std::to_string(i)});
      if (!r.ok()) return r.status();
    }
    return absl::OkStatus();
  });

  EXPECT_EQ(sql("select status || '/' || remaining_tasks from pgflow.step_states "
                "where run_id = $1 and step_slug = 'each'",
                {run_id}),
            "completed/0");
  nlohmann::json expected = nlohmann::json::array();
  for (int i = 0; i < kTasks; ++i) expected.push_back(i * 10);
  EXPECT_EQ(
      nlohmann::json::parse(sql(
          "select output::text from pgflow.step_states where run_id = $1 and step_slug = 'each'",
          {run_id})),
      expected);
  EXPECT_EQ(sql("select count(*) from pgflow_tests.realtime_events($1) where event = "
                "'step:each:completed'",
                {run_id}),
            "1");
  EXPECT_EQ(sql("select count(*) from pgflow_tests.realtime_events($1) where event = "
                "'step:after:started'",
                {run_id}),
            "1");
  EXPECT_EQ(sql("select remaining_steps from pgflow.runs where run_id = $1", {run_id}), "1");
}

TEST_F(SqlCoreRace, ConcurrentClaimsOfTheSameMessagesStartEachTaskOnce) {
  constexpr int kTasks = 40;
  constexpr int kClaimers = 6;
  std::string run_id = start_map_run(kTasks);
  const std::string ids = pg_array(all_message_ids("fan"));
  std::vector<int> claimed(kClaimers, 0);
  concurrently(kClaimers, [&](int i, pg::Connection& c) -> absl::Status {
    std::string worker = absl::StrCat("00000000-0000-0000-0000-00000000000", i);
    auto w = c.exec("select pgflow_tests.ensure_worker('fan', $1::uuid)", {worker});
    if (!w.ok()) return w.status();
    auto r =
        c.exec("select * from pgflow.start_tasks('fan', $1::bigint[], $2::uuid)", {ids, worker});
    if (!r.ok()) return r.status();
    claimed[static_cast<size_t>(i)] = r->rows();
    return absl::OkStatus();
  });
  int total = 0;
  for (int n : claimed) total += n;
  EXPECT_EQ(total, kTasks);
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1 "
                "and status = 'started' and attempts_count = 1",
                {run_id}),
            std::to_string(kTasks));
}

TEST_F(SqlCoreRace, FailAndCompleteRacingOnOneRunLeaveItFailedWithNothingActive) {
  constexpr int kTasks = 32;
  constexpr int kThreads = 8;
  std::string run_id = start_map_run(kTasks, /*max_attempts=*/1);
  ASSERT_THAT(exec("select pgflow_tests.ensure_worker('fan')"), IsOk());
  ASSERT_EQ(sql("select count(*) from pgflow.start_tasks('fan', $1::bigint[], $2::uuid)",
                {pg_array(all_message_ids("fan")), kWorker}),
            std::to_string(kTasks));
  // Thread 0 fails task 17 (exhausting the step, failing the run) while the others complete.
  concurrently(kThreads, [&](int t, pg::Connection& c) -> absl::Status {
    for (int i = t; i < kTasks; i += kThreads) {
      auto r = (i == 17) ? c.exec("select pgflow.fail_task($1::uuid, 'each', 17, 'boom')", {run_id})
                         : c.exec("select pgflow.complete_task($1::uuid, 'each', $2::int, '1')",
                                  {run_id, std::to_string(i)});
      if (!r.ok()) return r.status();
    }
    return absl::OkStatus();
  });
  EXPECT_EQ(sql("select status from pgflow.runs where run_id = $1", {run_id}), "failed");
  EXPECT_EQ(sql("select status from pgflow.step_states where run_id = $1 and step_slug = 'each'",
                {run_id}),
            "failed");
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1 "
                "and status in ('queued', 'started')",
                {run_id}),
            "0");
  // Tasks completed before the failure stay completed; the rest were cancelled.
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1 "
                "and status in ('completed', 'cancelled')",
                {run_id}),
            std::to_string(kTasks - 1));
  EXPECT_EQ(sql("select count(*) from pgmq.q_fan"), "0");
  EXPECT_EQ(sql("select count(*) from pgflow_tests.realtime_events($1) where event = 'run:failed'",
                {run_id}),
            "1");
}

TEST_F(SqlCoreRace, StallRecoveryRacingALateCompletionHasOneOutcome) {
  constexpr int kRounds = 12;
  std::string run_id = start_map_run(kRounds);
  ASSERT_THAT(exec("select pgflow_tests.ensure_worker('fan')"), IsOk());
  ASSERT_EQ(sql("select count(*) from pgflow.start_tasks('fan', $1::bigint[], $2::uuid)",
                {pg_array(all_message_ids("fan")), kWorker}),
            std::to_string(kRounds));
  // Each round makes its own task look stalled (started long ago), only that one, then races
  // recovery and that task's completion: a recovery never finds another round's task.
  for (int i = 0; i < kRounds; ++i) {
    ASSERT_THAT(exec("update pgflow.step_tasks set started_at = now() - interval '1 hour', "
                     "queued_at = now() - interval '2 hours' where run_id = $1 and task_index = $2",
                     {run_id, std::to_string(i)}),
                IsOk());
    concurrently(2, [&](int t, pg::Connection& c) -> absl::Status {
      auto r = (t == 0) ? c.exec("select pgflow.requeue_stalled_tasks()")
                        : c.exec("select pgflow.complete_task($1::uuid, 'each', $2::int, '1')",
                                 {run_id, std::to_string(i)});
      return r.status();
    });
  }
  // Each task either completed (the completion won) or was requeued (recovery won, and the
  // late completion then changed nothing): never both, never anything else.
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1 and "
                "((status = 'completed' and requeued_count = 0) or "
                " (status = 'queued' and requeued_count = 1 and output is null))",
                {run_id}),
            std::to_string(kRounds));
  // Requeued tasks' messages are visible again; completed ones are archived.
  EXPECT_EQ(sql("select count(*) from pgmq.q_fan"),
            sql("select count(*) from pgflow.step_tasks where run_id = $1 and status = 'queued'",
                {run_id}));
}

TEST_F(SqlCoreRace, EventsArePublishedWithPgNotifyWithoutData) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection listener, pg::Connection::open(db_->url()));
  ASSERT_THAT(listener.listen("pgflow_events"), IsOk());
  ASSERT_THAT(exec("select pgflow.create_flow('notify_me')"), IsOk());
  ASSERT_THAT(exec("select pgflow.add_step('notify_me', 'only')"), IsOk());
  std::string run_id =
      sql("select run_id from pgflow.start_flow('notify_me', '{\"secret\": \"hunter2\"}')");

  std::vector<nlohmann::json> events;
  for (int i = 0; i < 2; ++i) {
    auto n =
        listener.wait_notification(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    ASSERT_THAT(n, IsOk());
    ASSERT_TRUE(n->has_value()) << "expected two notifications";
    EXPECT_THAT((*n)->payload, ::testing::Not(::testing::HasSubstr("hunter2")));
    events.push_back(nlohmann::json::parse((*n)->payload));
  }
  EXPECT_EQ(events[0], (nlohmann::json{{"event", "run:started"},
                                       {"run_id", run_id},
                                       {"flow_slug", "notify_me"},
                                       {"status", "started"}}));
  EXPECT_EQ(events[1], (nlohmann::json{{"event", "step:started"},
                                       {"run_id", run_id},
                                       {"flow_slug", "notify_me"},
                                       {"step_slug", "only"},
                                       {"status", "started"}}));
}

// complete_tasks publishes a batch's events in one call (schema 0015): the completed steps'
// notifications, then the completed runs', each in run_id order, still without data.
TEST_F(SqlCoreRace, ABatchOfResultsNotifiesItsStepsThenItsRuns) {
  ASSERT_THAT(exec("select pgflow.create_flow('notify_batch', timeout => 60)"), IsOk());
  ASSERT_THAT(exec("select pgflow.add_step('notify_batch', 'only')"), IsOk());
  ASSERT_THAT(exec("select pgflow.register_worker($1::uuid, 'fn', 'notify_batch', "
                   "'notify_batch', pgflow.worker_protocol())",
                   {kWorker}),
              IsOk());
  std::vector<std::string> runs = {
      sql("select run_id from pgflow.start_flow('notify_batch', '{}')"),
      sql("select run_id from pgflow.start_flow('notify_batch', '{}')")};
  std::sort(runs.begin(), runs.end());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection listener, pg::Connection::open(db_->url()));
  ASSERT_THAT(listener.listen("pgflow_events"), IsOk());
  ASSERT_EQ(
      sql("select count(*) from pgflow.complete_tasks(("
          "  select jsonb_agg(jsonb_build_object('run_id', c.run_id, 'step_slug', c.step_slug,"
          "                   'task_index', c.task_index, 'output', '{\"secret\": "
          "\"hunter2\"}'::jsonb))"
          "  from pgflow.claim_tasks('notify_batch', 'notify_batch',"
          "         array(select m.msg_id from pgmq.read('notify_batch', 60, 10) m),"
          "         $1::uuid, null, gen_random_uuid()) c where c.outcome = 'claimed'))",
          {kWorker}),
      "2");

  std::vector<nlohmann::json> events;
  for (int i = 0; i < 4; ++i) {
    auto n =
        listener.wait_notification(std::chrono::steady_clock::now() + std::chrono::seconds(10));
    ASSERT_THAT(n, IsOk());
    ASSERT_TRUE(n->has_value()) << "expected four notifications, got " << i;
    EXPECT_THAT((*n)->payload, ::testing::Not(::testing::HasSubstr("hunter2")));
    events.push_back(nlohmann::json::parse((*n)->payload));
  }
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(events[i], (nlohmann::json{{"event", "step:completed"},
                                         {"run_id", runs[i]},
                                         {"flow_slug", "notify_batch"},
                                         {"step_slug", "only"},
                                         {"status", "completed"}}));
    EXPECT_EQ(events[2 + i], (nlohmann::json{{"event", "run:completed"},
                                             {"run_id", runs[i]},
                                             {"flow_slug", "notify_batch"},
                                             {"status", "completed"}}));
  }
}

}  // namespace
}  // namespace pgflow
