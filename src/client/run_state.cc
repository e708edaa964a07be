#include "pgflow/run_state.h"

#include <array>
#include <ostream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "client/run_state_json.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "internal/timestamps.h"

namespace pgflow {
namespace {

// The database's words, indexed by enum value.
constexpr std::array<std::string_view, 3> kRunStatuses = {"started", "completed", "failed"};
constexpr std::array<std::string_view, 5> kStepStatuses = {"created", "started", "completed",
                                                           "failed", "skipped"};
constexpr std::array<std::string_view, 3> kSkipReasons = {"condition_unmet", "handler_failed",
                                                          "dependency_skipped"};

template <typename Enum, size_t N>
absl::StatusOr<Enum> parse_word(const std::array<std::string_view, N>& words, std::string_view word,
                                std::string_view what) {
  for (size_t i = 0; i < N; ++i) {
    if (words[i] == word) return static_cast<Enum>(i);
  }
  return absl::InternalError(
      absl::StrCat("pgflow: unknown ", internal::absl_view(what), " \"", internal::absl_view(word),
                   "\" (is the database's schema newer than this library?)"));
}

std::optional<int> opt_int(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || !it->is_number_integer()) return std::nullopt;
  return it->get<int>();
}
std::optional<nlohmann::json> opt_json(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return *it;
}

absl::StatusOr<StepState> step_from_json(const nlohmann::json& s) {
  StepState step;
  step.step_slug = s.value("step_slug", "");
  PGFLOW_ASSIGN_OR_RETURN(
      step.status, parse_word<StepStatus>(kStepStatuses, s.value("status", ""), "step status"));
  // A completed step's output may be JSON null (a void handler, a signal without payload): a
  // value, not "no output".
  if (step.status == StepStatus::kCompleted && s.contains("output")) step.output = s["output"];
  step.error_message = internal::json_string(s, "error_message");
  if (std::optional<std::string> reason = internal::json_string(s, "skip_reason")) {
    PGFLOW_ASSIGN_OR_RETURN(step.skip_reason,
                            parse_word<SkipReason>(kSkipReasons, *reason, "skip reason"));
  }
  step.remaining_tasks = opt_int(s, "remaining_tasks");
  step.initial_tasks = opt_int(s, "initial_tasks");
  step.remaining_deps = s.value("remaining_deps", 0);
  PGFLOW_ASSIGN_OR_RETURN(step.started_at, internal::json_timestamp(s, "started_at"));
  PGFLOW_ASSIGN_OR_RETURN(step.completed_at, internal::json_timestamp(s, "completed_at"));
  PGFLOW_ASSIGN_OR_RETURN(step.failed_at, internal::json_timestamp(s, "failed_at"));
  PGFLOW_ASSIGN_OR_RETURN(step.skipped_at, internal::json_timestamp(s, "skipped_at"));
  step.waiting_tasks = s.value("waiting_tasks", 0);
  PGFLOW_ASSIGN_OR_RETURN(step.wakes_at, internal::json_timestamp(s, "wake_at"));
  return step;
}

}  // namespace

std::string_view to_string(RunStatus status) {
  return kRunStatuses.at(static_cast<size_t>(status));
}
std::string_view to_string(StepStatus status) {
  return kStepStatuses.at(static_cast<size_t>(status));
}
std::string_view to_string(SkipReason reason) {
  return kSkipReasons.at(static_cast<size_t>(reason));
}
std::ostream& operator<<(std::ostream& os, RunStatus status) { return os << to_string(status); }
std::ostream& operator<<(std::ostream& os, StepStatus status) { return os << to_string(status); }
std::ostream& operator<<(std::ostream& os, SkipReason reason) { return os << to_string(reason); }

const StepState* RunState::step(std::string_view slug) const {
  for (const StepState& s : steps) {
    if (s.step_slug == slug) return &s;
  }
  return nullptr;
}

namespace detail {
absl::Status output_conversion_error(std::string_view what, std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat("pgflow: the output of ", internal::absl_view(what),
                   " does not convert: ", internal::absl_view(reason)));
}
absl::Status no_output_error(std::string_view what, std::string_view status) {
  return absl::FailedPreconditionError(absl::StrCat(
      "pgflow: ", internal::absl_view(what), " has no output (", internal::absl_view(status), ")"));
}
}  // namespace detail

namespace internal {

std::optional<std::string> json_string(const nlohmann::json& j, const char* key) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return std::nullopt;
  return it->is_string() ? it->get<std::string>() : it->dump();
}

absl::StatusOr<RunState> run_state_from_json(const nlohmann::json& j) {
  if (!j.is_object() || !j.contains("run") || !j["run"].is_object()) {
    return absl::InternalError("pgflow: not a get_run_with_states object");
  }
  const nlohmann::json& r = j["run"];
  RunState run;
  run.run_id = r.value("run_id", "");
  run.flow_slug = r.value("flow_slug", "");
  run.flow_alias = j.value("flow_alias", run.flow_slug);  // (absent before 0005: self-alias)
  PGFLOW_ASSIGN_OR_RETURN(run.status,
                          parse_word<RunStatus>(kRunStatuses, r.value("status", ""), "run status"));
  run.input = r.value("input", nlohmann::json());
  run.output = opt_json(r, "output");
  // A completed run whose leaf steps were all skipped has no leaf output: the database says
  // NULL, and {} is what a record of optional leaves reads (FlowOutput).
  if (run.status == RunStatus::kCompleted && !run.output) run.output = nlohmann::json::object();
  run.remaining_steps = r.value("remaining_steps", 0);
  PGFLOW_ASSIGN_OR_RETURN(std::optional<absl::Time> started_at, json_timestamp(r, "started_at"));
  run.started_at = started_at.value_or(absl::InfinitePast());
  PGFLOW_ASSIGN_OR_RETURN(run.completed_at, json_timestamp(r, "completed_at"));
  PGFLOW_ASSIGN_OR_RETURN(run.failed_at, json_timestamp(r, "failed_at"));
  PGFLOW_ASSIGN_OR_RETURN(run.cancelled_at,
                          json_timestamp(r, "cancelled_at"));  // (absent before 0008)
  run.cancel_reason = internal::json_string(r, "cancel_reason");
  run.restart_of_run_id = internal::json_string(r, "restart_of_run_id");
  for (const nlohmann::json& s : j.value("steps", nlohmann::json::array())) {
    PGFLOW_ASSIGN_OR_RETURN(StepState step, step_from_json(s));
    run.steps.push_back(std::move(step));
  }
  return run;
}

}  // namespace internal
}  // namespace pgflow
