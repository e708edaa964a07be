// The non-template half of the typed flow builder (pgflow/flow.h): everything that does not
// depend on a step's types, so the templates stay small.
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "pgflow/deployed_flow.h"
#include "pgflow/detail/wrapped_flow.h"
#include "pgflow/flow.h"

namespace pgflow::detail {

StepDefinition new_step(std::string_view slug, StepType type,
                        std::span<const std::string_view> dependencies, WhenMode when_unmet,
                        WhenMode when_exhausted) {
  StepDefinition step;
  step.slug = std::string(slug);
  step.type = type;
  step.dependencies.assign(dependencies.begin(), dependencies.end());
  step.when_unmet = when_unmet;
  step.when_exhausted = when_exhausted;
  return step;
}

std::shared_ptr<const FlowDefinition> append_step(const FlowDefinition& flow, StepDefinition step,
                                                  StepHandler handler) {
  auto copy = std::make_shared<FlowDefinition>(flow);
  step.handler = std::move(handler);
  copy->steps.push_back(std::move(step));
  return copy;
}

namespace {

// Unset when nothing is set; a limit or weight without a path keeps the empty path, which
// validate() reports.
std::optional<ConcurrencyKeyValues> key_values(const ConcurrencyKey& key) {
  std::optional<std::string> path = key.path.value();
  std::optional<std::string> weight = key.weight.value();
  if (!path && !key.limit.value() && !weight) return std::nullopt;
  return ConcurrencyKeyValues{path.value_or(""), key.limit.value(), std::move(weight)};
}

}  // namespace

std::shared_ptr<const FlowDefinition> new_flow(std::string_view slug, const FlowOptions& options) {
  auto flow = std::make_shared<FlowDefinition>();
  flow->slug = std::string(slug);
  flow->options = FlowOptionValues{options.max_attempts.value(), options.base_delay.seconds(),
                                   options.timeout.seconds(), options.concurrency_limit.value(),
                                   key_values(options.concurrency_key)};
  return flow;
}

void apply_step_arg(StepDefinition& step, IfPattern&& arg) {
  step.if_pattern = std::move(arg.pattern);
}

void apply_step_arg(StepDefinition& step, IfNotPattern&& arg) {
  step.if_not_pattern = std::move(arg.pattern);
}

void apply_step_arg(StepDefinition& step, const StepOptions& options) {
  step.options =
      StepOptionValues{options.max_attempts.value(),      options.base_delay.seconds(),
                       options.timeout.seconds(),         options.start_delay.seconds(),
                       options.concurrency_limit.value(), key_values(options.concurrency_key)};
}

void apply_step_arg(StepDefinition& step, const SleepForArg& arg) {
  step.wait->sleep_for = arg.duration;
}

void apply_step_arg(StepDefinition& step, const SleepUntilArg& arg) {
  // Dotted field names; an empty name ("a..b") stays, for validate() to report.
  step.wait->sleep_until.assign(1, "");
  for (char c : arg.path) {
    if (c == '.') {
      step.wait->sleep_until.emplace_back();
    } else {
      step.wait->sleep_until.back().push_back(c);
    }
  }
}

std::shared_ptr<const FlowDefinition> with_queue_mode(const FlowDefinition& flow, QueueMode mode) {
  auto copy = std::make_shared<FlowDefinition>(flow);
  copy->queue_mode = mode;
  return copy;
}

std::shared_ptr<const FlowDefinition> with_alias(const FlowDefinition& flow, std::string alias) {
  auto copy = std::make_shared<FlowDefinition>(flow);
  copy->alias = std::move(alias);
  return copy;
}

}  // namespace pgflow::detail
