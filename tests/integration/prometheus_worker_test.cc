// pgflow::PrometheusMetrics fed by a real worker running a real flow, scraped over HTTP.
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/flow.h"
#include "pgflow/prometheus.h"
#include "pgflow/worker.h"
#include "testing/database_test.h"
#include "testing/prometheus_scrape.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::http_get;
using pgflow::testing::IsOk;
using pgflow::testing::sample;
using pgflow::testing::start_run;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_for_run;
using ::testing::StartsWith;

// A map step whose task for 2 fails its first attempt, then a single step over its output.
const auto doubled_sum =
    Flow<"promDoubledSum", std::vector<int>>({.max_attempts = 3, .base_delay = 1})
        .map<"double">([](int x, Context& ctx) -> absl::StatusOr<int> {
          if (x == 2 && ctx.attempt() == 1) return absl::UnavailableError("fails once");
          return 2 * x;
        })
        .step<"sum">(after<"double">, [](const std::vector<int>& v) {
          int sum = 0;
          for (int x : v) sum += x;
          return sum;
        });

using PrometheusWorkerTest = pgflow::testing::DatabaseTest;

TEST_F(PrometheusWorkerTest, CountsAWorkersTasksPerStepAndServesThem) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                              PrometheusMetrics::serve("127.0.0.1:0"));
  WorkerConfig config = test_worker_config(db_->url());
  config.metrics = prom->worker_metrics(doubled_sum.definition());
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(doubled_sum, config));
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                                start_run(*conn_, "promDoubledSum", json{1, 2, 3}));
    PGFLOW_ASSERT_OK_AND_ASSIGN(json run, wait_for_run(*conn_, run_id));
    EXPECT_EQ(run["run"]["status"], "completed");
    EXPECT_EQ(run["run"]["output"], json({{"sum", 12}}));
    // A result's metric follows its report: once the worker stopped, every one was delivered.
    worker.stop();
    ASSERT_THAT(worker.wait(), IsOk());
  }

  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string metrics, http_get(prom->port(), "/metrics"));
  ASSERT_THAT(metrics, StartsWith("HTTP/1.1 200"));
  auto at = [&](const std::string& series) { return sample(metrics, series); };
  // 3 map tasks, the retry of one of them, and the single step.
  EXPECT_EQ(at(R"(pgflow_tasks_claimed_total{flow="promDoubledSum"})"), 5);
  EXPECT_EQ(at(R"(pgflow_tasks_completed_total{flow="promDoubledSum",step="double"})"), 3);
  EXPECT_EQ(at(R"(pgflow_tasks_completed_total{flow="promDoubledSum",step="sum"})"), 1);
  EXPECT_EQ(at(R"(pgflow_task_attempts_retried_total{flow="promDoubledSum",step="double"})"), 1);
  EXPECT_EQ(at(R"(pgflow_task_attempts_retried_total{flow="promDoubledSum",step="sum"})"), 0);
  EXPECT_EQ(at(R"(pgflow_tasks_failed_total{flow="promDoubledSum",step="double"})"), 0);
  EXPECT_EQ(at(R"(pgflow_tasks_failed_total{flow="promDoubledSum",step="sum"})"), 0);
  EXPECT_EQ(at(R"(pgflow_task_results_dropped_total{flow="promDoubledSum",step="double"})"), 0);
  // One handler call per attempt.
  EXPECT_EQ(at(R"(pgflow_handler_seconds_count{flow="promDoubledSum",step="double"})"), 4);
  EXPECT_EQ(at(R"(pgflow_handler_seconds_count{flow="promDoubledSum",step="sum"})"), 1);
  // Idle polls count too, so only a floor: the first map claim, the retry's (after the first
  // attempt failed) and the sum's (after the retry completed) are three round trips.
  EXPECT_GE(at(R"(pgflow_claim_latency_seconds_count{flow="promDoubledSum"})").value_or(0), 3);
}

}  // namespace
}  // namespace pgflow
