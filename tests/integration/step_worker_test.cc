// Step workers of StepQueuedFlows against the real embedded PostgreSQL: one worker per step,
// several in one process, each registered on its step's private queue; tasks of a step without
// a worker wait in its queue; a changed queue mode is a routing mismatch.
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"
#include "testing/database_test.h"
#include "testing/status_matchers.h"
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
using pgflow::testing::wait_for_run;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;

// fetch -> double (map) -> total
inline const auto plain_relay =
    Flow<"wRelay", int>()
        .array<"fetch">([](int n) { return std::vector<int>(static_cast<std::size_t>(n), n); })
        .map<"double">(over<"fetch">, [](int x) { return 2 * x; })
        .step<"total">(after<"double">, [](const std::vector<int>& xs) {
          int sum = 0;
          for (int x : xs) sum += x;
          return sum;
        });
inline const auto relay = with_step_queues(plain_relay);

inline const auto other =
    with_step_queues(Flow<"wOther", int>().step<"echo">([](int x) { return x; }));

class StepWorkerTest : public pgflow::testing::DatabaseTest {
 protected:
  WorkerConfig config() { return test_worker_config(db_->url(), &logs_); }
  std::string sql(const std::string& q, const std::vector<pg::Param>& p = {}) {
    auto r = query_text(*conn_, q, p);
    EXPECT_THAT(r, IsOk()) << q;
    return r.ok() ? *r : "";
  }
  LogRecorder logs_;
};

TEST_F(StepWorkerTest, OneWorkerPerStepInOneProcessRunsTheFlow) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker fetch,
                              EdgeWorker::start(relay, only_step<"fetch">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker doubler,
                              EdgeWorker::start(relay, only_step<"double">, config()));
  WorkerConfig by_name = config();
  by_name.step = "total";  // the run-time selector
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker total, EdgeWorker::start(relay, by_name));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker echo,
                              EdgeWorker::start(other, only_step<"echo">, config()));

  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wRelay", 3));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string other_run, start_run(*conn_, "wOther", 7));
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run, wait_for_run(*conn_, run_id));
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"total", 18}}));  // 3 x (2 x 3)
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run2, wait_for_run(*conn_, other_run));
  EXPECT_EQ(run2["run"]["output"], json({{"echo", 7}}));

  EXPECT_EQ(sql("select string_agg(function_name || '@' || queue_name, ' ' "
                "order by function_name) from pgflow.workers where stopped_at is null"),
            "wOther-echo-worker@wother__echo wRelay-double-worker@wrelay__double "
            "wRelay-fetch-worker@wrelay__fetch wRelay-total-worker@wrelay__total");
  EXPECT_EQ(sql("select count(*) from pgflow.workers where protocol <> pgflow.worker_protocol()"),
            "0");
  EXPECT_EQ(sql("select string_agg(distinct step_slug || '@' || queue_name, ' ' order by step_slug "
                "|| '@' || queue_name) "
                "from pgflow.step_tasks where run_id = $1::uuid",
                {run_id}),
            "double@wrelay__double fetch@wrelay__fetch total@wrelay__total");

  // The startup line names flow, step, queue and queue mode.
  bool found = false;
  for (const auto& e : logs_.entries()) {
    if (e.message != "worker started") continue;
    const std::string line = e.text();
    if (line.find("step=double") == std::string::npos) continue;
    found = true;
    EXPECT_THAT(line,
                AllOf(HasSubstr("flow=wRelay"), HasSubstr("queue=wrelay__double"),
                      HasSubstr("queue_mode=step"), HasSubstr("function=wRelay-double-worker")));
  }
  EXPECT_TRUE(found) << "no startup line of the double worker";
}

TEST_F(StepWorkerTest, TasksOfAStepWithoutAWorkerWaitInItsQueue) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker fetch,
                              EdgeWorker::start(relay, only_step<"fetch">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wRelay", 2));
  // fetch is done and both map tasks wait, queued, in the map's own queue.
  ASSERT_THAT(wait_until(*conn_,
                         "select count(*) = 2 from pgflow.step_tasks where run_id = $1::uuid "
                         "and step_slug = 'double' and status = 'queued'",
                         {run_id}),
              IsOk());
  EXPECT_EQ(sql("select count(*) from pgmq.q_wrelay__double"), "2");
  EXPECT_EQ(sql("select count(*) from pgmq.q_wrelay__fetch"), "0");
  EXPECT_EQ(sql("select status from pgflow.runs where run_id = $1::uuid", {run_id}), "started");

  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker doubler,
                              EdgeWorker::start(relay, only_step<"double">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker total,
                              EdgeWorker::start(relay, only_step<"total">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run, wait_for_run(*conn_, run_id));
  EXPECT_EQ(run["run"]["output"], json({{"total", 8}}));
}

TEST_F(StepWorkerTest, AChangedQueueModeIsARoutingMismatchOutsideLocalDevelopment) {
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(plain_relay, config()));
    w.stop();
    ASSERT_THAT(w.wait(), IsOk());
  }
  ASSERT_THAT(conn_->exec("alter database " + pg::quote_identifier(db_->name()) +
                          " set pgflow.local = off"),
              IsOk());
  EXPECT_THAT(EdgeWorker::start(relay, only_step<"fetch">, config()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("queue mode or route"),
                             HasSubstr("Queue mode differs: 'step' vs 'flow'"))));
  EXPECT_EQ(sql("select queue_mode from pgflow.flows where flow_slug = 'wRelay'"), "flow");
  EXPECT_EQ(sql("select count(*) from pgflow.workers where stopped_at is null"), "0");
}

TEST_F(StepWorkerTest, LocalDevelopmentRecompilesAPlainFlowIntoStepQueues) {
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w, EdgeWorker::start(plain_relay, config()));
    w.stop();
    ASSERT_THAT(w.wait(), IsOk());
  }
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker fetch,
                              EdgeWorker::start(relay, only_step<"fetch">, config()));
  EXPECT_EQ(sql("select queue_mode from pgflow.flows where flow_slug = 'wRelay'"), "step");
  EXPECT_EQ(sql("select string_agg(queue_name, ',' order by queue_name) from pgmq.meta"),
            "wrelay__double,wrelay__fetch,wrelay__total");
}

}  // namespace
}  // namespace pgflow
