#include "worker/reporter.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "internal/text_checks.h"
#include "pg/error.h"

namespace pgflow::internal {
namespace {

// One call per batch (worker protocol 5). The database locks the batch's runs in run_id order,
// so concurrent reporters cannot deadlock, and applies each result as complete_task /
// fail_task would one by one.
constexpr char kCompleteBatch[] = "select t.step_slug, t.status from pgflow.complete_tasks($1::jsonb) t";
constexpr char kFailBatch[] = "select t.step_slug, t.status from pgflow.fail_tasks($1::jsonb) t";

// Error texts may carry invalid UTF-8 (outputs are checked in submit); replace it rather than
// throw.
constexpr auto kReplaceInvalidUtf8 = nlohmann::json::error_handler_t::replace;

nlohmann::json to_rows(const std::vector<TaskResult>& batch, bool completions) {
  nlohmann::json rows = nlohmann::json::array();
  for (const TaskResult& r : batch) {
    nlohmann::json row = {{"run_id", r.run_id}, {"step_slug", r.step_slug},
                          {"task_index", r.task_index}};
    if (completions) {
      row["output"] = r.output;
    } else {
      row["error_message"] = r.error_message;
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

}  // namespace

Reporter::Reporter(pg::Session session, Logger log, int batch_size,
                   std::function<void(const WorkerMetric&)> metrics)
    : session_(std::move(session)),
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
               {{"run_id", r.run_id}, {"step_slug", r.step_slug},
                {"task_index", std::to_string(r.task_index)}, {"msg_id", r.message_id}});
  }
}

void Reporter::report(std::vector<TaskResult> batch, bool completions,
                      const std::stop_token& give_up) {
  if (batch.empty()) return;
  const std::string rows = to_rows(batch, completions).dump(-1, ' ', false, kReplaceInvalidUtf8);
  absl::StatusOr<pg::Result> result = session_.retry<pg::Result>(
      give_up, completions ? "complete tasks" : "fail tasks",
      [&](pg::Connection& c) { return c.exec(completions ? kCompleteBatch : kFailBatch, {rows}); });
  if (result.ok()) {
    count(*result);
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
  const std::string rows = to_rows({r}, r.ok).dump(-1, ' ', false, kReplaceInvalidUtf8);
  absl::StatusOr<pg::Result> result = session_.retry<pg::Result>(
      give_up, "report task",
      [&](pg::Connection& c) { return c.exec(r.ok ? kCompleteBatch : kFailBatch, {rows}); });
  if (result.ok()) {
    count(*result);
    return;
  }
  if (give_up.stop_requested()) {
    abandon({r});
    return;
  }
  log_.error(r.ok ? "could not store a task's output; failing the attempt instead"
                  : "could not report a task's failure; stall recovery will retry the task",
             {{"run_id", r.run_id}, {"step_slug", r.step_slug},
              {"task_index", std::to_string(r.task_index)}, {"msg_id", r.message_id},
              {"error", std::string(result.status().message())}});
  if (r.ok) {
    TaskResult failure = r;
    failure.ok = false;
    failure.error_message = "pgflow: the database refused the output: " +
                            std::string(result.status().message());
    report_alone(failure, give_up);
  }
}

// One metric per reported task, by the status the database gave it: completed, failed
// (exhausted, or a type violation), or queued again (a retry). Late callbacks that changed
// nothing return the task's unchanged status and are counted as such.
void Reporter::count(const pg::Result& rows) const {
  for (int i = 0; i < rows.rows(); ++i) {
    const std::string_view step = rows.text(i, 0);
    const std::string_view status = rows.text(i, 1);
    if (status == "completed") {
      emit(WorkerMetric::Kind::kCompleted, step, 1);
    } else if (status == "failed") {
      emit(WorkerMetric::Kind::kFailed, step, 1);
    } else if (status == "queued") {
      emit(WorkerMetric::Kind::kRetried, step, 1);
    }
  }
}

void Reporter::emit(WorkerMetric::Kind kind, std::string_view step, double value) const {
  if (metrics_) metrics_(WorkerMetric{kind, step, value});
}

}  // namespace pgflow::internal
