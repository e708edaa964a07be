#include "pgflow/prometheus.h"

#include <exception>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"
#include "internal/status_macros.h"
#include "prometheus/counter.h"
#include "prometheus/exposer.h"
#include "prometheus/family.h"
#include "prometheus/histogram.h"
#include "prometheus/registry.h"

namespace pgflow {

using prometheus::Counter;
using prometheus::Family;
using prometheus::Histogram;

struct PrometheusMetrics::Families {
  // Owns the families below; holding it keeps every series a callback points to valid.
  std::shared_ptr<prometheus::Registry> registry;
  Family<Counter>& claimed;
  Family<Counter>& completed;
  Family<Counter>& failed;
  Family<Counter>& retried;
  Family<Counter>& dropped;
  Family<Histogram>& claim_latency;
  Family<Histogram>& handler;
};

namespace {

// Workers measure milliseconds; Prometheus' base unit is the second.
double seconds(double millis) { return millis / 1000.0; }

// A claim is one database round trip: a millisecond is good, a second is a problem.
Histogram::BucketBoundaries claim_buckets() {
  return {0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};
}
// Handlers run from a millisecond to their step's timeout (minutes, sometimes an hour).
Histogram::BucketBoundaries handler_buckets() {
  return {0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600};
}

}  // namespace

// The series of one flow, updated by the callbacks of its workers.
class PrometheusMetrics::FlowSeries {
 public:
  FlowSeries(std::shared_ptr<const Families> families, std::string flow)
      : families_(std::move(families)),
        flow_(std::move(flow)),
        claimed_(families_->claimed.Add({{"flow", flow_}})),
        claim_latency_(families_->claim_latency.Add({{"flow", flow_}}, claim_buckets())) {}

  // Creates a step's series at 0 before its first measurement.
  void add_step(std::string_view slug) { step(slug); }

  void record(const WorkerMetric& m) {
    using Kind = WorkerMetric::Kind;
    switch (m.kind) {  // no default: a new kind is a -Wswitch warning here
      case Kind::kClaimed:
        claimed_.Increment(m.value);
        break;
      case Kind::kClaimLatency:
        claim_latency_.Observe(seconds(m.value));
        break;
      case Kind::kCompleted:
        step(m.step_slug).completed->Increment(m.value);
        break;
      case Kind::kFailed:
        step(m.step_slug).failed->Increment(m.value);
        break;
      case Kind::kRetried:
        step(m.step_slug).retried->Increment(m.value);
        break;
      case Kind::kDropped:
        step(m.step_slug).dropped->Increment(m.value);
        break;
      case Kind::kHandlerTime:
        step(m.step_slug).handler->Observe(seconds(m.value));
        break;
      case Kind::kLooked:  // not exported: an idle worker's looks say nothing about its tasks
        break;
    }
  }

 private:
  struct StepSeries {
    Counter* completed = nullptr;
    Counter* failed = nullptr;
    Counter* retried = nullptr;
    Counter* dropped = nullptr;
    Histogram* handler = nullptr;
  };

  // A step's series: Family::Add takes the family's lock and builds a label map, so they are
  // looked up once per step and then read under a shared lock. (The slug is copied: the
  // worker's view is valid during the callback only.)
  StepSeries step(std::string_view slug) {
    const absl::string_view key(slug.data(), slug.size());
    {
      absl::ReaderMutexLock lock(&mu_);
      if (auto it = steps_.find(key); it != steps_.end()) return it->second;
    }
    absl::MutexLock lock(&mu_);
    auto [it, inserted] = steps_.try_emplace(std::string(slug));
    if (inserted) {
      const prometheus::Labels labels{{"flow", flow_}, {"step", it->first}};
      it->second = {&families_->completed.Add(labels), &families_->failed.Add(labels),
                    &families_->retried.Add(labels), &families_->dropped.Add(labels),
                    &families_->handler.Add(labels, handler_buckets())};
    }
    return it->second;
  }

  const std::shared_ptr<const Families> families_;
  const std::string flow_;
  Counter& claimed_;
  Histogram& claim_latency_;
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, StepSeries> steps_ ABSL_GUARDED_BY(mu_);
};

PrometheusMetrics::PrometheusMetrics(std::shared_ptr<const Families> families)
    : families_(std::move(families)) {}

PrometheusMetrics::~PrometheusMetrics() = default;

absl::StatusOr<std::unique_ptr<PrometheusMetrics>> PrometheusMetrics::create(
    std::shared_ptr<prometheus::Registry> registry) {
  if (registry == nullptr) {
    return absl::InvalidArgumentError(
        "pgflow: PrometheusMetrics::create needs a registry, got null");
  }
  // prometheus-cpp reports a refused name by throwing; no exception crosses pgflow's API.
  try {
    prometheus::Registry& r = *registry;
    auto families = std::make_shared<const Families>(Families{
        .registry = std::move(registry),
        .claimed = prometheus::BuildCounter()
                       .Name("pgflow_tasks_claimed_total")
                       .Help("Tasks claimed by pgflow workers (each attempt once)")
                       .Register(r),
        .completed = prometheus::BuildCounter()
                         .Name("pgflow_tasks_completed_total")
                         .Help("Tasks reported completed")
                         .Register(r),
        .failed = prometheus::BuildCounter()
                      .Name("pgflow_tasks_failed_total")
                      .Help("Tasks whose failure exhausted their attempts")
                      .Register(r),
        .retried = prometheus::BuildCounter()
                       .Name("pgflow_task_attempts_retried_total")
                       .Help("Failed task attempts that the database will retry")
                       .Register(r),
        .dropped = prometheus::BuildCounter()
                       .Name("pgflow_task_results_dropped_total")
                       .Help("Handler results not reported: the task was no longer wanted "
                             "(run cancelled or failed, step skipped)")
                       .Register(r),
        .claim_latency = prometheus::BuildHistogram()
                             .Name("pgflow_claim_latency_seconds")
                             .Help("Seconds of one read-and-claim round trip (idle polls included)")
                             .Register(r),
        .handler = prometheus::BuildHistogram()
                       .Name("pgflow_handler_seconds")
                       .Help("Seconds of one handler call")
                       .Register(r),
    });
    return std::unique_ptr<PrometheusMetrics>(new PrometheusMetrics(std::move(families)));
  } catch (const std::exception& e) {
    return absl::AlreadyExistsError(
        absl::StrCat("pgflow: the registry refused pgflow's metric families: ", e.what()));
  }
}

absl::StatusOr<std::unique_ptr<PrometheusMetrics>> PrometheusMetrics::serve(
    std::string bind_address) {
  // civetweb would start without listening anywhere.
  if (bind_address.empty()) {
    return absl::InvalidArgumentError(
        "pgflow: PrometheusMetrics::serve needs an address, e.g. 127.0.0.1:9464");
  }
  PGFLOW_ASSIGN_OR_RETURN(std::unique_ptr<PrometheusMetrics> metrics,
                          create(std::make_shared<prometheus::Registry>()));
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(bind_address);
    metrics->exposer_->RegisterCollectable(metrics->registry());
  } catch (const std::exception& e) {  // civetweb's "could not bind" and the like
    return absl::UnavailableError(
        absl::StrCat("pgflow: cannot serve Prometheus metrics on \"", bind_address,
                     "\" (a malformed address, a port in use, or one not permitted): ", e.what()));
  }
  return metrics;
}

std::function<void(const WorkerMetric&)> PrometheusMetrics::worker_metrics(
    std::string flow_slug) const {
  auto series = std::make_shared<FlowSeries>(families_, std::move(flow_slug));
  return [series](const WorkerMetric& m) { series->record(m); };
}

std::function<void(const WorkerMetric&)> PrometheusMetrics::worker_metrics(
    const FlowDefinition& flow) const {
  auto series = std::make_shared<FlowSeries>(families_, flow.slug);
  for (const StepDefinition& step : flow.steps) {
    if (step.handler) series->add_step(step.slug);  // (wait steps have no worker)
  }
  return [series](const WorkerMetric& m) { series->record(m); };
}

const std::shared_ptr<prometheus::Registry>& PrometheusMetrics::registry() const {
  return families_->registry;
}

int PrometheusMetrics::port() const {
  if (exposer_ == nullptr) return 0;
  const std::vector<int> ports = exposer_->GetListeningPorts();
  return ports.empty() ? 0 : ports.front();
}

}  // namespace pgflow
