// File: pgflow/flow_definition.h
//
// The runtime form of a flow: what the typed builder (pgflow/flow.h) produces after its
// compile-time checks, and what the worker consumes. Handlers here are type-erased: they
// take the task's JSON input and return its JSON output.
//
// Most code never builds a FlowDefinition by hand; it gets one from a typed flow:
//
//   const pgflow::FlowDefinition& def = onboard.definition();
//   nlohmann::ordered_json shape = pgflow::shape_of(def);   // for ensure_flow_compiled
//   absl::Status ok = pgflow::validate(def);                // runtime-only rules
//
// A hand-built definition (tools, tests, dynamic flows) gets none of the compile-time
// checks, so validate() re-checks every rule.
#ifndef PGFLOW_FLOW_DEFINITION_H_
#define PGFLOW_FLOW_DEFINITION_H_

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"

namespace pgflow {

// How the SQL core runs a step: one task (`single`), or one task per element of an array
// (`map`).
enum class StepType { kSingle, kMap };

// What happens when a step's condition is not met (when_unmet) or its last attempt fails
// (when_exhausted): fail the run, skip the step (dependents run without its output), or skip
// it and every step that depends on it, transitively.
enum class WhenMode { kFail, kSkip, kSkipCascade };

// Where a flow's tasks are queued, deployment metadata beside its shape (the flow shape does
// not include it): kFlow, every step's tasks in the flow's queue lower(flow_slug); kStep, one
// private queue per step, so a huge or slow step cannot starve the others
// (pgflow::with_step_queues, pgflow/step_queued_flow.h).
enum class QueueMode { kFlow, kStep };

// "single" / "map".
std::string_view to_string(StepType type);
// "fail" / "skip" / "skip-cascade", the SQL and flow-shape spelling.
std::string_view to_string(WhenMode mode);
// "flow" / "step", the SQL spelling (pgflow.flows.queue_mode).
std::string_view to_string(QueueMode mode);

// A concurrency key's values (pgflow::ConcurrencyKey): dotted paths into the run input.
struct ConcurrencyKeyValues {
  std::string path;
  std::optional<int> limit = {};
  std::optional<std::string> weight_path = {};
};

// Flow-level option values; nullopt means the database default (3, 5 s, 60 s). Times are whole
// seconds, the SQL core's unit.
struct FlowOptionValues {
  std::optional<int> max_attempts = {};
  std::optional<std::chrono::seconds> base_delay = {};
  std::optional<std::chrono::seconds> timeout = {};
  // Deployment metadata, not shape: see flow_control_of(). nullopt: no flow-wide limit.
  std::optional<int> concurrency_limit = {};
  // Deployment metadata: the key that shares the limits of steps without their own.
  std::optional<ConcurrencyKeyValues> concurrency_key = {};
};

// Step-level option values; nullopt means inherit the flow's value (start_delay: 0;
// concurrency_limit: no limit of the step's own).
struct StepOptionValues {
  std::optional<int> max_attempts = {};
  std::optional<std::chrono::seconds> base_delay = {};
  std::optional<std::chrono::seconds> timeout = {};
  std::optional<std::chrono::seconds> start_delay = {};
  // Deployment metadata, not shape: see flow_control_of(). nullopt: no limit of its own.
  std::optional<int> concurrency_limit = {};
  // Deployment metadata: the step's own key. nullopt: the flow's key, if any.
  std::optional<ConcurrencyKeyValues> concurrency_key = {};
};

// pgflow::StepHandler
//
// A type-erased handler. `input` is exactly the `input` column of the claim
// (pgflow.claim_tasks):
//   - root single step: `{}` (the run input comes from ctx.flow_input());
//   - dependent single step: `{dep_slug: output, ...}` for the dependencies that completed
//     (a skipped dependency is absent);
//   - map step: the one array element this task processes.
// The result is the task's output, or a non-OK status that fails the attempt with the
// status message. The wrappers produced by the typed builder never throw.
//
// Handlers run concurrently on the worker's pool, several at once and possibly the same
// handler for many tasks: they must be thread-safe.
using StepHandler =
    std::function<absl::StatusOr<nlohmann::json>(const nlohmann::json& input, Context& ctx)>;

// pgflow::WaitDefinition
//
// What a wait step's tasks wait for instead of a handler (docs/waiting.md); the SQL core
// completes them, no worker is involved. A signal (pgflow.send_signal, Client::send_signal)
// whose payload is the task's output - for ever, or until `timeout`, when the task fails (no
// retries; the step's when_exhausted applies) or, with `timeout_output`, completes with that.
// Or a sleep: for `sleep_for`, or until the ISO 8601 timestamp at path `sleep_until` of the
// step's input (single steps only); it completes with {"until": that time}.
struct WaitDefinition {
  enum class Kind { kSignal, kSleep };
  Kind kind = Kind::kSignal;
  std::optional<std::chrono::seconds> timeout = {};
  std::optional<nlohmann::json> timeout_output = {};
  std::optional<std::chrono::seconds> sleep_for = {};
  std::vector<std::string> sleep_until = {};
};

// A sleep step's output: the time it slept until, as the SQL core writes it (ISO 8601, e.g.
// "2026-12-03T17:30:00+00:00").
struct Slept {
  std::string until;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Slept, until)

// pgflow::StepDefinition
struct StepDefinition {
  std::string slug = {};
  StepType type = StepType::kSingle;
  // Slugs of the steps this one depends on, in declaration order (a map: at most one, its
  // source array). The flow shape sorts them; this list does not.
  std::vector<std::string> dependencies = {};
  StepOptionValues options = {};
  // The step runs only if its condition input contains `if_pattern` (JSON containment,
  // PostgreSQL `@>`) and does not contain `if_not_pattern`. Both must be JSON objects.
  // Upstream calls them `if` / `ifNot` (requiredInputPattern / forbiddenInputPattern).
  std::optional<nlohmann::json> if_pattern = {};
  std::optional<nlohmann::json> if_not_pattern = {};
  WhenMode when_unmet = WhenMode::kSkip;  // only meaningful with a pattern
  WhenMode when_exhausted = WhenMode::kFail;
  // A wait step's wait; it has no handler then (and takes no options).
  std::optional<WaitDefinition> wait = {};
  StepHandler handler = {};
};

// pgflow::FlowDefinition
struct FlowDefinition {
  std::string slug = {};
  FlowOptionValues options = {};
  // In declaration order, which is a topological order: a step only depends on earlier ones.
  std::vector<StepDefinition> steps = {};
  // How the steps' tasks are queued; with_step_queues() sets kStep.
  QueueMode queue_mode = QueueMode::kFlow;
  // The alias this version is deployed under (define_deployed_flow); none: its own slug.
  std::optional<std::string> alias = {};

  // The step called `slug`, or nullptr.
  const StepDefinition* find(std::string_view step_slug) const;
};

// The flow-shape JSON that pgflow.ensure_flow_compiled(flow_slug, shape) takes, exactly as
// upstream pgflow's extractFlowShape emits it (same keys, key order and value spelling):
//
//   {"steps": [{"slug", "stepType", "dependencies" (sorted), "whenUnmet", "whenExhausted",
//               "requiredInputPattern": {"defined": false} | {"defined": true, "value": …},
//               "forbiddenInputPattern": …,
//               "options"?: {"maxAttempts"?, "baseDelay"?, "timeout"?, "startDelay"?},
//               "wait"?: {"kind": "signal", "timeout"?, "timeoutOutput"?}
//                      | {"kind": "sleep", "seconds" | "until"}}, …],
//    "options"?: {"maxAttempts"?, "baseDelay"?, "timeout"?}}
//
// `options` objects appear only when at least one value is set, with only the set keys. Only
// wait steps have a "wait" (ours: upstream has no wait steps, so a flow without waits has
// upstream's shape byte for byte, and one with waits never matches an upstream worker's). The
// flow slug is not part of the shape. Dependencies sort by byte order (ASCII), as
// JavaScript's Array.prototype.sort does for slugs.
nlohmann::ordered_json shape_of(const FlowDefinition& flow);

// The flow-control options the worker deploys beside the shape (pgflow.ensure_flow_compiled's
// flow_control), with only the limits and keys that are set:
//
//   {"concurrencyLimit"?: n, "concurrencyKey"?: key,
//    "steps"?: {step_slug: {"concurrencyLimit"?: n, "concurrencyKey"?: key}, …}}
//   key: {"path": [field, …], "limit"?: n, "weightPath"?: [field, …]}
//
// An empty object when the flow uses none (the worker then deploys it as before).
nlohmann::ordered_json flow_control_of(const FlowDefinition& flow);

// The alias a flow is started by: its deployment alias, or its own slug.
inline const std::string& alias_of(const FlowDefinition& flow) {
  return flow.alias ? *flow.alias : flow.slug;
}

// The queue a step's tasks go to (pgflow.steps.queue_name).
struct StepRoute {
  std::string step_slug;
  std::string queue_name;
};

// The route of every step, in step order, exactly as the SQL core derives it: in queue mode
// kFlow every step's queue is lower(flow slug); in kStep each step's private queue is
// lower(flow_slug + "__" + step_slug), or lower(flow_slug + "__" + step_index) (zero-based)
// when that is longer than PGMQ's 47 characters. kInvalidArgument, naming the flow and the
// step, when even the index name does not fit (the flow cannot use step queues).
absl::StatusOr<std::vector<StepRoute>> routes_of(const FlowDefinition& flow);

// Checks the rules that the typed builder cannot check at compile time, plus every
// compile-time rule for hand-built definitions: slugs (shared rules; flow slug at most 47
// characters), unique step slugs (also ignoring case), dependencies on earlier steps only and
// at most one for a map, patterns are JSON objects, option ranges (max_attempts >= 1,
// base_delay >= 1, timeout >= 3, start_delay >= 0, concurrency_limit >= 1), a handler for
// every step but wait steps (which have none, and no options; a wait's timeout and sleep are
// whole seconds, a signal's timeout at least 1, a sleep has one of sleep_for and sleep_until,
// and only a single step's sleep reads a timestamp), in queue mode kStep at least one step and a private queue name that fits for
// each (routes_of), and an alias under the shared slug rules.
// Returns kInvalidArgument listing every problem; each names the flow, the step and the field.
absl::Status validate(const FlowDefinition& flow);

}  // namespace pgflow

#endif  // PGFLOW_FLOW_DEFINITION_H_
