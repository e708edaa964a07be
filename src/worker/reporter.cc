#include "worker/reporter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "internal/text_checks.h"

namespace pgflow::internal {

Reporter::Reporter(std::unique_ptr<Store> store, Logger log, int batch_size,
                   std::function<void(const WorkerMetric&)> metrics)
    : store_(std::move(store)),
      log_(std::move(log)),
      batch_size_(std::max(batch_size, 1)),
      metrics_(std::move(metrics)) {}

void Reporter::submit(TaskResult result) {
  // Checked here, on the handler's thread, before anything copies or dumps the output (both
  // recurse once per level): an output jsonb cannot store (a hand-built handler's; typed
  // handlers check theirs) fails the attempt instead (docs/errors.md, "Hostile input").
  if (result.ok) {
    if (std::optional<JsonProblem> problem = json_problem(result.output)) {
      result.ok = false;
      result.output = nullptr;
      result.error_message = "pgflow: the handler's output cannot be stored: it " + problem->text;
      result.permanent = true;  // as a typed handler's output_conversion_error
    }
  }
  // jsonb cannot store a NUL character: shown as \0 (invalid UTF-8 is replaced when dumped).
  for (std::size_t nul = result.error_message.find('\0'); nul != std::string::npos;
       nul = result.error_message.find('\0', nul + 2)) {
    result.error_message.replace(nul, 1, "\\0");
  }
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back(std::move(result));
  }
  ready_.Signal();
}

void Reporter::finish() {
  {
    absl::MutexLock lock(&mu_);
    finishing_ = true;
  }
  ready_.SignalAll();
}

void Reporter::run(const std::stop_token& give_up) {
  // Wakes the wait below when `give_up` is requested (signalled under mu_, so the wait cannot
  // miss it). Registered before mu_ is taken, since it runs at once if the stop was requested.
  std::stop_callback wake(give_up, [this] {
    absl::MutexLock lock(&mu_);
    ready_.SignalAll();
  });
  while (true) {
    std::vector<TaskResult> completions, failures;
    {
      // A condition variable, not an Await: results that arrive while this thread wakes up join
      // the same batch (an Await hands over at the first result: smaller batches, more round trips).
      absl::MutexLock lock(&mu_);
      while (!finishing_ && queue_.empty() && !give_up.stop_requested()) ready_.Wait(&mu_);
      if (give_up.stop_requested()) {
        abandon(std::vector<TaskResult>(queue_.begin(), queue_.end()));
        queue_.clear();
        return;
      }
      if (queue_.empty()) return;  // finishing and drained
      while (!queue_.empty() &&
             static_cast<int>(completions.size() + failures.size()) < batch_size_) {
        (queue_.front().ok ? completions : failures).push_back(std::move(queue_.front()));
        queue_.pop_front();
      }
    }
    report(std::move(completions), true, give_up);
    report(std::move(failures), false, give_up);
  }
}

void Reporter::abandon(const std::vector<TaskResult>& results) const {
  for (const TaskResult& r : results) {
    log_.error("result not reported before shutdown; stall recovery will retry the task",
               {{"run_id", r.run_id},
                {"step_slug", r.step_slug},
                {"task_index", std::to_string(r.task_index)},
                {"msg_id", r.message_id}});
  }
}

void Reporter::report(std::vector<TaskResult> batch, bool completions,
                      const std::stop_token& give_up) {
  if (batch.empty()) return;
  absl::StatusOr<std::vector<ReportedTask>> result =
      completions ? store_->complete_tasks(batch, give_up) : store_->fail_tasks(batch, give_up);
  if (result.ok()) {
    count(*result, completions);
    return;
  }
  if (give_up.stop_requested()) {
    abandon(batch);
    return;
  }
  // A non-transient error (e.g. a statement timeout, or a value the database refuses): find
  // the result that causes it by reporting one at a time.
  for (const TaskResult& r : batch) report_alone(r, give_up);
}

void Reporter::report_alone(const TaskResult& r, const std::stop_token& give_up) {
  absl::StatusOr<std::vector<ReportedTask>> result =
      r.ok ? store_->complete_tasks({r}, give_up) : store_->fail_tasks({r}, give_up);
  if (result.ok()) {
    count(*result, r.ok);
    return;
  }
  if (give_up.stop_requested()) {
    abandon({r});
    return;
  }
  log_.error(r.ok ? "could not store a task's output; failing the attempt instead"
                  : "could not report a task's failure; stall recovery will retry the task",
             {{"run_id", r.run_id},
              {"step_slug", r.step_slug},
              {"task_index", std::to_string(r.task_index)},
              {"msg_id", r.message_id},
              {"error", std::string(result.status().message())}});
  if (r.ok) {
    TaskResult failure = r;
    failure.ok = false;
    failure.error_message =
        "pgflow: the database refused the output: " + std::string(result.status().message());
    // Data the database can never store (22P05 \u0000, 54000 too big, ...) fails the task now.
    failure.permanent = result.status().code() == absl::StatusCode::kInvalidArgument;
    report_alone(failure, give_up);
  }
}

// One metric per reported task, by the status the database gave it: completed, failed
// (exhausted, or a type violation), or queued again (a retry). The database also returns tasks a
// report did not change, as they are: a status this kind of report cannot give is one of those
// and is not counted (a completion found queued again by stall recovery is no retry, a failure
// found completed by another attempt no completion). A late result whose task another claim
// took and ended since is counted as that claim's report counts it (docs/observability.md).
void Reporter::count(const std::vector<ReportedTask>& tasks, bool completions) const {
  for (const ReportedTask& task : tasks) {
    if (task.status == "failed") {
      emit(WorkerMetric::Kind::kFailed, task.step_slug, 1);
    } else if (task.status == (completions ? "completed" : "queued")) {
      emit(completions ? WorkerMetric::Kind::kCompleted : WorkerMetric::Kind::kRetried,
           task.step_slug, 1);
    }
  }
}

void Reporter::emit(WorkerMetric::Kind kind, std::string_view step, double value) const {
  if (metrics_) metrics_(WorkerMetric{kind, step, value});
}

}  // namespace pgflow::internal
