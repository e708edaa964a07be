// pgflow::PrometheusMetrics without a database: metrics fed in directly, read back through the
// registry and over HTTP.
#include "pgflow/prometheus.h"

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "prometheus/client_metric.h"
#include "prometheus/gauge.h"
#include "prometheus/metric_family.h"
#include "prometheus/registry.h"
#include "testing/prometheus_scrape.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using Kind = WorkerMetric::Kind;
using pgflow::testing::http_get;
using pgflow::testing::sample;
using pgflow::testing::StatusIs;
using ::testing::HasSubstr;
using ::testing::StartsWith;

// One collected series: a counter's value, or a histogram's count and sum.
struct Series {
  double value = 0;
  uint64_t count = 0;
  double sum = 0;
};

// The series of family `name` whose labels are exactly `labels`; nullopt when there is none.
std::optional<Series> collected(prometheus::Registry& registry, const std::string& name,
                                const std::map<std::string, std::string>& labels) {
  for (const prometheus::MetricFamily& family : registry.Collect()) {
    if (family.name != name) continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      std::map<std::string, std::string> got;
      for (const auto& label : metric.label) got[label.name] = label.value;
      if (got != labels) continue;
      return Series{.value = metric.counter.value,
                    .count = metric.histogram.sample_count,
                    .sum = metric.histogram.sample_sum};
    }
  }
  return std::nullopt;
}

TEST(PrometheusMetricsTest, CountsPerFlowAndStep) {
  auto registry = std::make_shared<prometheus::Registry>();
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                              PrometheusMetrics::create(registry));
  auto orders = prom->worker_metrics("orders");
  auto mail = prom->worker_metrics("mail");
  // The worker's step view is valid during the callback only: the label must be a copy.
  std::string step = "ship";
  orders({Kind::kClaimed, {}, 3});
  orders({Kind::kClaimed, {}, 2});
  orders({Kind::kCompleted, step, 1});
  orders({Kind::kCompleted, step, 1});
  orders({Kind::kRetried, step, 1});
  orders({Kind::kHandlerTime, step, 1500});
  orders({Kind::kHandlerTime, step, 500});
  orders({Kind::kClaimLatency, {}, 20});
  step = "bill";
  orders({Kind::kFailed, step, 1});
  orders({Kind::kDropped, step, 1});
  mail({Kind::kCompleted, "ship", 1});

  using Labels = std::map<std::string, std::string>;
  const Labels ship{{"flow", "orders"}, {"step", "ship"}};
  const Labels bill{{"flow", "orders"}, {"step", "bill"}};
  auto value = [&](const std::string& name, const Labels& labels) {
    std::optional<Series> s = collected(*registry, name, labels);
    return s ? s->value : -1;
  };
  EXPECT_EQ(value("pgflow_tasks_claimed_total", {{"flow", "orders"}}), 5);
  EXPECT_EQ(value("pgflow_tasks_claimed_total", {{"flow", "mail"}}), 0);  // exists from the start
  EXPECT_EQ(value("pgflow_tasks_completed_total", ship), 2);
  EXPECT_EQ(value("pgflow_task_attempts_retried_total", ship), 1);
  EXPECT_EQ(value("pgflow_tasks_failed_total", ship), 0);  // a step's series start together
  EXPECT_EQ(value("pgflow_task_results_dropped_total", ship), 0);
  EXPECT_EQ(value("pgflow_tasks_failed_total", bill), 1);
  EXPECT_EQ(value("pgflow_task_results_dropped_total", bill), 1);
  EXPECT_EQ(value("pgflow_tasks_completed_total", bill), 0);
  EXPECT_EQ(value("pgflow_tasks_completed_total", {{"flow", "mail"}, {"step", "ship"}}), 1);

  std::optional<Series> handler = collected(*registry, "pgflow_handler_seconds", ship);
  ASSERT_TRUE(handler.has_value());
  EXPECT_EQ(handler->count, 2u);
  EXPECT_DOUBLE_EQ(handler->sum, 2.0);  // milliseconds arrive, seconds are kept
  std::optional<Series> latency =
      collected(*registry, "pgflow_claim_latency_seconds", {{"flow", "orders"}});
  ASSERT_TRUE(latency.has_value());
  EXPECT_EQ(latency->count, 1u);
  EXPECT_DOUBLE_EQ(latency->sum, 0.02);
}

// Given the flow's definition, every step with a handler has its series at 0 before any
// measurement: the first failure after a worker starts is an increase, not a new series that
// rate() and increase() would miss. A wait step (no handler, no worker) gets none.
TEST(PrometheusMetricsTest, AFlowDefinitionsStepsHaveTheirSeriesFromTheStart) {
  auto registry = std::make_shared<prometheus::Registry>();
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                              PrometheusMetrics::create(registry));
  FlowDefinition flow{.slug = "orders"};
  flow.steps.push_back({.slug = "ship"});
  flow.steps.back().handler = [](const nlohmann::json&,
                                 Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; };
  flow.steps.push_back({.slug = "approve"});  // a wait step: no handler
  auto callback = prom->worker_metrics(flow);
  for (const char* name :
       {"pgflow_tasks_completed_total", "pgflow_tasks_failed_total",
        "pgflow_task_attempts_retried_total", "pgflow_task_results_dropped_total"}) {
    std::optional<Series> s = collected(*registry, name, {{"flow", "orders"}, {"step", "ship"}});
    ASSERT_TRUE(s.has_value()) << name;
    EXPECT_EQ(s->value, 0) << name;
    EXPECT_FALSE(collected(*registry, name, {{"flow", "orders"}, {"step", "approve"}}).has_value())
        << name;
  }
  ASSERT_TRUE(collected(*registry, "pgflow_handler_seconds", {{"flow", "orders"}, {"step", "ship"}})
                  .has_value());
  callback({Kind::kFailed, "ship", 1});
  EXPECT_EQ(
      collected(*registry, "pgflow_tasks_failed_total", {{"flow", "orders"}, {"step", "ship"}})
          ->value,
      1);
}

TEST(PrometheusMetricsTest, CallbacksOfOneFlowShareSeriesAcrossThreads) {
  auto registry = std::make_shared<prometheus::Registry>();
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                              PrometheusMetrics::create(registry));
  constexpr int kThreads = 4;
  constexpr int kPerThread = 1000;
  {
    std::vector<std::jthread> threads;
    for (int t = 0; t < kThreads; ++t) {
      // One callback per worker, as WorkerConfig::metrics gets; all of one flow.
      threads.emplace_back([callback = prom->worker_metrics("f")] {
        const std::string steps[] = {"a", "b", "c"};
        for (int i = 0; i < kPerThread; ++i) callback({Kind::kCompleted, steps[i % 3], 1});
      });
    }
  }
  double total = 0;
  for (const char* step : {"a", "b", "c"}) {
    std::optional<Series> s =
        collected(*registry, "pgflow_tasks_completed_total", {{"flow", "f"}, {"step", step}});
    ASSERT_TRUE(s.has_value()) << step;
    total += s->value;
  }
  EXPECT_EQ(total, kThreads * kPerThread);
}

TEST(PrometheusMetricsTest, CallbacksOutliveTheExporter) {
  auto registry = std::make_shared<prometheus::Registry>();
  std::function<void(const WorkerMetric&)> callback;
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                                PrometheusMetrics::create(registry));
    callback = prom->worker_metrics("f");
  }
  callback({Kind::kCompleted, "s", 1});
  std::optional<Series> s =
      collected(*registry, "pgflow_tasks_completed_total", {{"flow", "f"}, {"step", "s"}});
  ASSERT_TRUE(s.has_value());
  EXPECT_EQ(s->value, 1);
}

TEST(PrometheusMetricsTest, RefusesANullRegistryOrAConflictingName) {
  EXPECT_THAT(PrometheusMetrics::create(nullptr).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("registry")));
  auto registry = std::make_shared<prometheus::Registry>();
  prometheus::BuildGauge().Name("pgflow_tasks_completed_total").Register(*registry);
  EXPECT_THAT(PrometheusMetrics::create(registry).status(),
              StatusIs(absl::StatusCode::kAlreadyExists, HasSubstr("refused")));
}

TEST(PrometheusMetricsTest, ServesItsRegistryOverHttp) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> prom,
                              PrometheusMetrics::serve("127.0.0.1:0"));
  ASSERT_GT(prom->port(), 0);
  auto callback = prom->worker_metrics("served");
  callback({Kind::kClaimed, {}, 7});
  callback({Kind::kHandlerTime, "s", 250});
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string response, http_get(prom->port(), "/metrics"));
  EXPECT_THAT(response, StartsWith("HTTP/1.1 200"));
  EXPECT_EQ(sample(response, R"(pgflow_tasks_claimed_total{flow="served"})"), 7);
  EXPECT_EQ(sample(response, R"(pgflow_handler_seconds_count{flow="served",step="s"})"), 1);
  EXPECT_EQ(sample(response, R"(pgflow_handler_seconds_sum{flow="served",step="s"})"), 0.25);
}

TEST(PrometheusMetricsTest, ServeOnABusyAddressIsAnErrorNamingIt) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<PrometheusMetrics> first,
                              PrometheusMetrics::serve("127.0.0.1:0"));
  const std::string busy = "127.0.0.1:" + std::to_string(first->port());
  EXPECT_THAT(PrometheusMetrics::serve(busy).status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("\"" + busy + "\"")));
}

TEST(PrometheusMetricsTest, ServeOnABadAddressIsAnError) {
  EXPECT_THAT(PrometheusMetrics::serve("").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("address")));
  EXPECT_THAT(PrometheusMetrics::serve("not an address").status(),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("\"not an address\"")));
}

}  // namespace
}  // namespace pgflow
