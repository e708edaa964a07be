// File: pgflow/run_state.h
//
// pgflow::RunState: a run and its steps as the database holds them (what Client::get_run,
// wait_for_run and the starts return), with typed statuses and times.
//
//   absl::StatusOr<pgflow::RunState> run = client->wait_for_run(id, std::chrono::seconds(30));
//   if (run->status == pgflow::RunStatus::kCompleted) { ... }
//   for (const pgflow::StepState& s : run->steps) {
//     if (s.started_at && s.completed_at) log(s.step_slug, *s.completed_at - *s.started_at);
//   }
//
// to_string() gives the database's word for each value ("completed", "condition_unmet"), for
// logs and for comparing with SQL.
#ifndef PGFLOW_RUN_STATE_H_
#define PGFLOW_RUN_STATE_H_

#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "pgflow/detail/exact_json.h"

namespace pgflow {

// pgflow.runs.status. A cancelled run is kFailed with RunState::cancelled_at set.
enum class RunStatus { kStarted, kCompleted, kFailed };
// pgflow.step_states.status.
enum class StepStatus { kCreated, kStarted, kCompleted, kFailed, kSkipped };
// Why a step was skipped (pgflow.step_states.skip_reason).
enum class SkipReason {
  kConditionUnmet,     // its when/unless condition did not hold
  kHandlerFailed,      // its retries were exhausted under when_exhausted skip / skip-cascade
  kDependencySkipped,  // a dependency was skipped with skip-cascade
};

std::string_view to_string(RunStatus status);   // "started" | "completed" | "failed"
std::string_view to_string(StepStatus status);  // "created" | "started" | ... | "skipped"
std::string_view to_string(SkipReason reason);  // "condition_unmet" | ...
// For test and log output (prints to_string).
std::ostream& operator<<(std::ostream& os, RunStatus status);
std::ostream& operator<<(std::ostream& os, StepStatus status);
std::ostream& operator<<(std::ostream& os, SkipReason reason);

// One step of a run (a pgflow.step_states row).
struct StepState {
  std::string step_slug;
  StepStatus status = StepStatus::kCreated;
  std::optional<nlohmann::json> output;  // when completed (JSON null is an output: void steps)
  std::optional<std::string> error_message;
  std::optional<SkipReason> skip_reason;  // when skipped
  std::optional<int> remaining_tasks;
  std::optional<int> initial_tasks;
  int remaining_deps = 0;
  std::optional<absl::Time> started_at, completed_at, failed_at, skipped_at;
  // A wait step (docs/waiting.md) whose tasks wait for a signal or a sleep: how many, and
  // their earliest deadline (a timeout or a sleep's end; none: they wait for ever).
  int waiting_tasks = 0;
  std::optional<absl::Time> wakes_at;
  bool waiting() const { return waiting_tasks > 0; }

  // The output converted to T: kFailedPrecondition when the step has no output, kInvalidArgument
  // (naming the step) when it does not convert.
  template <typename T>
  absl::StatusOr<T> output_as() const;
};

// A run and its steps (pgflow.get_run_with_states).
struct RunState {
  std::string run_id;
  std::string flow_slug;   // the concrete version that runs (also after starting an alias)
  std::string flow_alias;  // the alias that version belongs to (its own slug for a plain flow)
  RunStatus status = RunStatus::kStarted;
  nlohmann::json input;
  // {leaf_slug: output} once completed; {} when every leaf step was skipped.
  std::optional<nlohmann::json> output;
  int remaining_steps = 0;
  absl::Time started_at;
  std::optional<absl::Time> completed_at, failed_at;
  std::optional<absl::Time> cancelled_at;        // set when Client::cancel_run ended the run
  std::optional<std::string> cancel_reason;      // the reason given to cancel_run, if any
  std::optional<std::string> restart_of_run_id;  // the run this one retried (Client::retry_run)
  std::vector<StepState> steps;                  // in step order

  bool finished() const { return status != RunStatus::kStarted; }
  bool cancelled() const { return cancelled_at.has_value(); }
  // The step called `slug`, or nullptr.
  const StepState* step(std::string_view slug) const;
  // The run output converted to T (e.g. pgflow::FlowOutput<decltype(flow)>).
  template <typename T>
  absl::StatusOr<T> output_as() const;
};

namespace detail {
absl::Status output_conversion_error(std::string_view what, std::string_view reason);
absl::Status no_output_error(std::string_view what, std::string_view status);

// `output` as T; the errors name `what` ("step x", "run y").
template <typename T>
absl::StatusOr<T> convert_output(const std::optional<nlohmann::json>& output,
                                 const std::string& what, std::string_view status) {
  if (!output) return no_output_error(what, status);
  try {
    return detail::exact_get<T>(*output);
  } catch (const std::exception& e) {
    return output_conversion_error(what, e.what());
  }
}
}  // namespace detail

template <typename T>
absl::StatusOr<T> StepState::output_as() const {
  return detail::convert_output<T>(output, "step " + step_slug, to_string(status));
}

template <typename T>
absl::StatusOr<T> RunState::output_as() const {
  return detail::convert_output<T>(output, "run " + run_id, to_string(status));
}

}  // namespace pgflow

#endif  // PGFLOW_RUN_STATE_H_
