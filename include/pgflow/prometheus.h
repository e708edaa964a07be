// File: pgflow/prometheus.h
//
// pgflow::PrometheusMetrics turns what workers measure (WorkerConfig::metrics, pgflow/worker.h)
// into Prometheus counters and histograms per flow and step, and can serve them over HTTP.
// An optional component: `find_package(pgflow CONFIG REQUIRED COMPONENTS prometheus)` and
// link `pgflow::prometheus`; it is built when prometheus-cpp is found (Debian:
// prometheus-cpp-dev). The core library never depends on it. docs/observability.md.
//
// Example, serving its own registry at http://127.0.0.1:9464/metrics:
//
//   absl::StatusOr<std::unique_ptr<pgflow::PrometheusMetrics>> prom =
//       pgflow::PrometheusMetrics::serve("127.0.0.1:9464");
//   if (!prom.ok()) return prom.status();
//   pgflow::WorkerConfig config{.max_concurrent = 8};
//   config.metrics = (*prom)->worker_metrics(greet.definition());  // label `flow`: its slug
//   absl::Status s = pgflow::EdgeWorker::run(greet, config);
//
// Or on a registry that your own prometheus::Exposer already serves:
//
//   absl::StatusOr<std::unique_ptr<pgflow::PrometheusMetrics>> prom =
//       pgflow::PrometheusMetrics::create(registry);
//
// Metrics (durations in seconds):
//
//   pgflow_tasks_claimed_total{flow}             counter    tasks claimed (each attempt once)
//   pgflow_tasks_completed_total{flow,step}      counter    tasks reported completed
//   pgflow_tasks_failed_total{flow,step}         counter    tasks that exhausted their attempts
//   pgflow_task_attempts_retried_total{flow,step} counter   failed attempts the database retries
//   pgflow_task_results_dropped_total{flow,step} counter    results not reported: the task was
//                                                           no longer wanted (run cancelled...)
//   pgflow_claim_latency_seconds{flow}           histogram  one read-and-claim round trip
//                                                           (idle polls included)
//   pgflow_handler_seconds{flow,step}            histogram  one handler call
//
// A flow's series exist (at 0) from worker_metrics(), and so do its steps' when it is given the
// flow's definition (a step's otherwise from its first measurement, all five at once), so
// rate() and alerts see a 0 rather than no series.
//
// @par Thread Safety
// Every member may be called from any thread. The callbacks of worker_metrics() run on worker
// threads; they take a shared lock only to look up a step's series (created once per step).
// They keep the registry alive, so they may outlive this object; destroying it stops only its
// HTTP server.
//
// @par Errors
// No exception escapes. create: kInvalidArgument for a null registry; kAlreadyExists when the
// registry refuses one of the names above (it exists as another kind of metric, or the
// registry refuses duplicates). serve: kInvalidArgument for an empty address; kUnavailable,
// naming the address, when it cannot listen there (malformed, in use, not permitted).
#ifndef PGFLOW_PROMETHEUS_H_
#define PGFLOW_PROMETHEUS_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "pgflow/worker.h"

namespace prometheus {
class Exposer;
class Registry;
}  // namespace prometheus

namespace pgflow {

// pgflow::PrometheusMetrics
//
// pgflow's metric families in one prometheus::Registry, and optionally the HTTP server that
// serves that registry.
class PrometheusMetrics {
 public:
  // Registers pgflow's metric families in `registry`. Two instances on one registry (of the
  // default InsertBehavior::Merge) share the families, and the series of equal labels.
  static absl::StatusOr<std::unique_ptr<PrometheusMetrics>> create(
      std::shared_ptr<prometheus::Registry> registry);

  // A new registry with pgflow's families, served at http://<bind_address>/metrics, e.g.
  // "127.0.0.1:9464" or "9464" (every interface). Port 0 picks a free port: see port().
  static absl::StatusOr<std::unique_ptr<PrometheusMetrics>> serve(std::string bind_address);

  PrometheusMetrics(const PrometheusMetrics&) = delete;
  PrometheusMetrics& operator=(const PrometheusMetrics&) = delete;
  ~PrometheusMetrics();

  // The callback for one worker of flow `flow_slug`: assign it to WorkerConfig::metrics. Step
  // workers of a StepQueuedFlow each get their own; metrics carry their step. Callbacks of the
  // same flow update the same series.
  std::function<void(const WorkerMetric&)> worker_metrics(std::string flow_slug) const;
  // The same for `flow` (e.g. greet.definition()): its slug, and the series of every step with
  // a handler exist at 0 from here, so the first outcome of a step after a worker starts is an
  // increase that rate() sees, not the first sample of a new series.
  std::function<void(const WorkerMetric&)> worker_metrics(const FlowDefinition& flow) const;

  // The registry the metrics are in (e.g. to add your own metrics to the served one).
  const std::shared_ptr<prometheus::Registry>& registry() const;

  // The port serve() listens on; 0 for an instance made by create().
  int port() const;

 private:
  struct Families;   // the registry and pgflow's families in it
  class FlowSeries;  // one flow's series, behind a worker_metrics() callback
  explicit PrometheusMetrics(std::shared_ptr<const Families> families);

  std::shared_ptr<const Families> families_;
  std::unique_ptr<prometheus::Exposer> exposer_;  // serve() only
};

}  // namespace pgflow

#endif  // PGFLOW_PROMETHEUS_H_
