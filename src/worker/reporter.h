// Reports task results to the database from its own thread and connection, batching several
// results into one round trip, so reporting never blocks polling. Results are kept until the
// database has them: transient failures (including a restarting server) are retried.
// Thread-safety: submit() and finish() may be called from any thread; mu_ guards the queue
// and the finishing flag, and is never held during a database call. The store is used by
// run()'s thread alone (and by close() after run() returned).
#ifndef PGFLOW_WORKER_REPORTER_H_
#define PGFLOW_WORKER_REPORTER_H_

#include <deque>
#include <functional>
#include <memory>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "nlohmann/json.hpp"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "worker/store.h"

namespace pgflow::internal {

class Reporter {
 public:
  Reporter(std::unique_ptr<Store> store, Logger log, int batch_size,
           std::function<void(const WorkerMetric&)> metrics);

  void submit(TaskResult result) ABSL_LOCKS_EXCLUDED(mu_);

  // Reports results as they arrive until `finish` is called and everything is reported, or
  // until `give_up` is requested (results still pending are then logged and dropped: their
  // tasks stay started and stall recovery retries them).
  void run(const std::stop_token& give_up) ABSL_LOCKS_EXCLUDED(mu_);
  // No more results will be submitted; run() returns once the backlog is reported.
  void finish() ABSL_LOCKS_EXCLUDED(mu_);
  // Closes the connection (after run() returned).
  void close() { store_->disconnect(); }

 private:
  // Reports one batch of completions or of failures; results that cannot be reported before
  // `give_up` are logged as abandoned.
  void report(std::vector<TaskResult> batch, bool completions, const std::stop_token& give_up)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Reports one result alone after its batch failed with a non-transient error.
  void report_alone(const TaskResult& result, const std::stop_token& give_up)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Logs results that will not be reported (their tasks stay started; stall recovery retries).
  void abandon(const std::vector<TaskResult>& results) const;
  // Emits one metric per reported task whose status a report of its kind gives.
  void count(const std::vector<ReportedTask>& tasks, bool completions) const;
  void emit(WorkerMetric::Kind kind, std::string_view step, double value) const;

  absl::Mutex mu_;       // queue_ and finishing_
  absl::CondVar ready_;  // signalled when a result arrives, at the finish and at give-up
  std::deque<TaskResult> queue_ ABSL_GUARDED_BY(mu_);
  bool finishing_ ABSL_GUARDED_BY(mu_) = false;
  std::unique_ptr<Store> store_;  // run()'s thread only
  Logger log_;
  int batch_size_;
  std::function<void(const WorkerMetric&)> metrics_;
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_REPORTER_H_
