#include "worker/task_runner.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
#include "internal/strings.h"
#include "pgflow/context.h"
#include "pgflow/status.h"

namespace pgflow::internal {
namespace {

// A failed attempt's message: the status's, or its code's name when it has none.
std::string error_text(const absl::Status& status) {
  if (!status.message().empty()) return std::string(status.message());
  return absl::StatusCodeToString(status.code());
}

// How an attempt fails when its handler fails after its deadline fired: the handler's own
// error is usually a consequence ("cancelled"), so the timeout leads and the error follows.
absl::Status deadline_exceeded(std::string_view step_slug, int timeout_seconds,
                               const absl::Status& handler) {
  return absl::DeadlineExceededError(absl::StrCat("step '", internal::absl_view(step_slug),
                                                  "' exceeded its timeout of ", timeout_seconds,
                                                  " s (handler: ", error_text(handler), ")"));
}

}  // namespace

TaskRunner::TaskRunner(const FlowDefinition& flow, InFlight& in_flight, FlowInputCache& inputs,
                       const Clock& clock, const Logger& log, MetricSink metric)
    : flow_(flow),
      in_flight_(in_flight),
      inputs_(inputs),
      clock_(clock),
      log_(log),
      metric_(std::move(metric)) {}

std::optional<TaskResult> TaskRunner::run(const ClaimedTask& task) {
  TaskResult result{.run_id = task.run_id,
                    .step_slug = task.step ? task.step->slug : std::string("?"),
                    .task_index = task.task_index,
                    .message_id = task.message_id,
                    .claim_id = task.claim_id};
  if (task.step == nullptr) {
    // claim_tasks only hands out tasks of this flow, whose steps were verified at startup.
    in_flight_.returned(task.id);
    result.error_message = "pgflow: this worker has no handler for the claimed step";
    return result;
  }
  if (!task.input_problem.empty()) {
    // jsonb holds numbers beyond a double's range (1e400), deeper nesting than a handler's copy
    // survives and, in a SQL_ASCII database, text that is not UTF-8: every attempt would read
    // the same bytes.
    in_flight_.returned(task.id);
    result.error_message = "pgflow: the task's input " + task.input_problem;
    result.permanent = true;
    return result;
  }
  Logger task_log = log_.with({{"run_id", task.run_id},
                               {"step", task.step->slug},
                               {"task_index", std::to_string(task.task_index)},
                               {"msg_id", task.message_id}});
  if (task.flow_input) inputs_.put(task.run_id, *task.flow_input);
  Context ctx(Context::Init{
      .flow_slug = flow_.slug,
      .run_id = task.run_id,
      .step_slug = task.step->slug,
      .task_index = task.task_index,
      .attempt = task.attempt,
      .message_id = task.message_id,
      .flow_input = task.flow_input,
      // Ends with the task (its deadline, the database, the worker's stop), not only the worker.
      .flow_input_provider = [this, run_id = task.run_id,
                              stop = task.stop] { return inputs_.get(run_id, stop); },
      .stop_token = task.stop,
      .deadline = task.deadline,
      .logger = task_log,
  });
  task_log.debug("task started", {{"attempt", std::to_string(task.attempt)}});
  const Clock::Time started = clock_.now();
  absl::StatusOr<nlohmann::json> output = absl::UnknownError("handler did not return");
  try {
    if (!task.step->handler) {
      // A wait step's task is never queued; a message for one is not this worker's to run.
      output = absl::FailedPreconditionError(
          absl::StrCat("step \"", task.step->slug, "\" is a wait step: it has no handler"));
    } else {
      output = task.step->handler(task.input, ctx);  // typed handlers never throw; hand-built may
    }
  } catch (const std::exception& e) {
    output = absl::InternalError(e.what());
  } catch (...) {
    output = absl::InternalError("the handler threw a non-standard exception");
  }
  const double millis = std::chrono::duration<double, std::milli>(clock_.now() - started).count();
  metric_(WorkerMetric::Kind::kHandlerTime, task.step->slug, millis);
  const HandlerEnding ending = in_flight_.returned(task.id);
  const std::string duration_ms = std::to_string(static_cast<long>(millis));
  if (ending.unwanted) {
    // The database already ended the task (its run was cancelled or failed, its step skipped):
    // whatever the handler returned changes nothing, so it is not reported.
    task_log.debug("task no longer wanted: result dropped", {{"duration_ms", duration_ms}});
    metric_(WorkerMetric::Kind::kDropped, task.step->slug, 1);
    return std::nullopt;
  }
  if (ending.timed_out && !output.ok()) {
    output = deadline_exceeded(task.step->slug, task.timeout_seconds, output.status());
  }
  if (output.ok()) {
    result.ok = true;
    result.output = *std::move(output);
    task_log.debug("task succeeded", {{"duration_ms", duration_ms}});
  } else {
    result.error_message = error_text(output.status());
    result.permanent = is_permanent(output.status());
    task_log.debug("task failed", {{"duration_ms", duration_ms},
                                   {"error", result.error_message},
                                   {"permanent", result.permanent ? "true" : "false"}});
  }
  return result;
}

}  // namespace pgflow::internal
