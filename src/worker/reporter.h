// Reports task results to the database from its own thread and connection, batching several
// results into one round trip, so reporting never blocks polling. Results are kept until the
// database has them: transient failures (including a restarting server) are retried.
#ifndef PGFLOW_WORKER_REPORTER_H_
#define PGFLOW_WORKER_REPORTER_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "pg/session.h"

namespace pgflow::internal {

// The outcome of one handler call.
struct TaskResult {
  std::string run_id;
  std::string step_slug;
  int task_index = 0;
  std::string message_id;         // decimal text, for logs
  bool ok = false;
  nlohmann::json output;          // when ok
  std::string error_message;      // when not ok
};

class Reporter {
 public:
  Reporter(pg::Session session, Logger log, int batch_size,
           std::function<void(const WorkerMetric&)> metrics);

  void submit(TaskResult result);

  // Reports results as they arrive until `finish` is called and everything is reported, or
  // until `give_up` is requested (results still pending are then logged and dropped: their
  // tasks stay started and stall recovery retries them).
  void run(const std::stop_token& give_up);
  // No more results will be submitted; run() returns once the backlog is reported.
  void finish();
  // Closes the connection (after run() returned).
  void close() { session_.reset(); }

 private:
  // Reports one batch of completions or of failures; results that cannot be reported before
  // `give_up` are logged as abandoned.
  void report(std::vector<TaskResult> batch, bool completions, const std::stop_token& give_up);
  // Reports one result alone after its batch failed with a non-transient error.
  void report_alone(const TaskResult& result, const std::stop_token& give_up);
  // Logs results that will not be reported (their tasks stay started; stall recovery retries).
  void abandon(const std::vector<TaskResult>& results) const;
  // Emits one metric per returned task row, by its status.
  void count(const pg::Result& rows) const;
  void emit(WorkerMetric::Kind kind, std::string_view step, double value) const;

  mutable std::mutex mu_;
  std::condition_variable_any ready_;
  std::deque<TaskResult> queue_;
  bool finishing_ = false;
  pg::Session session_;
  Logger log_;
  int batch_size_;
  std::function<void(const WorkerMetric&)> metrics_;
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_REPORTER_H_
