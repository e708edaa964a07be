// The worker, wired: its units, their threads and connections, and the stop sequence. EdgeWorker
// (pgflow/worker.h) is its public handle; tests build one on a fake store and a fake clock.
//
// Threads: the poller (claims), max_concurrent handler threads (the executor), the reporter,
// maintenance (heartbeat, stall recovery, stop announcements) and the supervisor, which fires
// task deadlines until the worker stops and then runs the stop sequence:
//   1. no new claims (the poller is joined; every in-flight task's stop token has fired);
//   2. handlers finish: awaited for at most stop_grace_period, then warned about and awaited
//      for as long as they take (a handler must return once its stop token fires);
//   3. their results are reported, retried until the end of the grace period (at least 1 s);
//      what is still unreported then is logged and left to stall recovery;
//   4. the worker is marked stopped (at most 5 s more) and its connections closed.
#ifndef PGFLOW_WORKER_WORKER_H_
#define PGFLOW_WORKER_WORKER_H_

#include <atomic>
#include <memory>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "pgflow/flow_definition.h"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "worker/clock.h"
#include "worker/executor.h"
#include "worker/flow_input_cache.h"
#include "worker/in_flight.h"
#include "worker/maintenance.h"
#include "worker/poller.h"
#include "worker/reporter.h"
#include "worker/store.h"
#include "worker/task_runner.h"

namespace pgflow::internal {

class Worker {
 public:
  // `config` complete and checked (complete_and_check), `routes` the flow's (routes_of).
  Worker(FlowDefinition flow, WorkerConfig config, std::vector<StepRoute> routes,
         StoreFactory stores, const Clock& clock);
  // Stops the worker and waits for it; joins the handler threads.
  ~Worker();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Startup (retried while the database is unreachable, up to startup_timeout), then the threads.
  absl::Status start();
  // The first reason given is the one wait() returns.
  void request_stop(absl::Status reason) ABSL_LOCKS_EXCLUDED(mu_);
  // Deprecated by an operator: no new claims; the tasks held finish (their stop tokens fire only
  // for their own deadlines or the database), then the worker stops with OkStatus.
  void request_drain() ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status wait() ABSL_LOCKS_EXCLUDED(mu_);
  bool running() const { return !stopped_.load(); }
  const std::string& worker_id() const { return worker_id_; }

 private:
  void set_stop_reason(absl::Status reason) ABSL_LOCKS_EXCLUDED(mu_);
  void supervise();
  // While `go_on` says so: fires the stop token of each task whose deadline passed.
  void fire_deadlines_while(bool (*go_on)(const InFlight::NextDeadline&));
  void run_stop_sequence() ABSL_LOCKS_EXCLUDED(mu_);
  void metric(WorkerMetric::Kind kind, std::string_view step, double value) const;

  const FlowDefinition flow_;
  const WorkerConfig config_;
  const std::vector<StepRoute> routes_;
  const std::string worker_id_;
  const std::string queue_;
  const Logger log_;
  StoreFactory stores_;
  const Clock& clock_;

  // Stop claiming: requested by a stop (with in_flight_.stop_all()) and by a drain.
  std::stop_source stop_;
  std::stop_source give_up_;  // stop retrying to report (grace period over)
  std::stop_source maintenance_stop_;

  absl::Mutex mu_;  // the stop reason, and stopped_ (written under it, for wait())
  absl::Status stop_reason_ ABSL_GUARDED_BY(mu_);
  bool stop_reason_set_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> stopped_{false};

  // The units, made by start(), in the order they depend on each other.
  InFlight in_flight_;
  std::unique_ptr<FlowInputCache> inputs_;
  std::unique_ptr<Reporter> reporter_;
  std::unique_ptr<Executor> executor_;
  std::unique_ptr<TaskRunner> runner_;
  std::unique_ptr<Store> poller_store_, maintenance_store_;
  std::unique_ptr<Poller> poller_;
  std::unique_ptr<Maintenance> maintenance_;
  std::jthread poller_thread_, reporter_thread_, maintenance_thread_, supervisor_thread_;
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_WORKER_H_
