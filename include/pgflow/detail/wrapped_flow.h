// File: pgflow/detail/wrapped_flow.h
//
// NOT API: what StepQueuedFlow and DeployedFlow share. A wrapper re-exports the typed API of
// the flow it wraps unchanged (input type, steps, their outputs, skip behaviour), so every
// inference rule - handler arguments, FlowInput / FlowOutput / StepOutput, step_slugs,
// only_step<> - works on the wrapper exactly as on the flow, and carries its own runtime
// definition (the wrapped one plus the deployment metadata the wrapper adds).
#ifndef PGFLOW_DETAIL_WRAPPED_FLOW_H_
#define PGFLOW_DETAIL_WRAPPED_FLOW_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/step.h"
#include "pgflow/flow_definition.h"

namespace pgflow::detail {

template <typename F>
class WrappedFlow {
 public:
  using input_type = typename F::input_type;
  static constexpr std::string_view slug() { return F::slug(); }
  static constexpr std::size_t step_count = F::step_count;
  static constexpr auto step_slugs = F::step_slugs;
  template <FixedString S>
  static constexpr bool has_step = F::template has_step<S>;

  // The runtime definition the worker consumes: the wrapped flow's, with this wrapper's
  // deployment metadata.
  const FlowDefinition& definition() const { return *definition_; }
  std::shared_ptr<const FlowDefinition> shared_definition() const { return definition_; }

 protected:
  WrappedFlow(F wrapped, std::shared_ptr<const FlowDefinition> definition)
      : wrapped_(std::move(wrapped)), definition_(std::move(definition)) {}

  F wrapped_;
  std::shared_ptr<const FlowDefinition> definition_;

 private:
  friend struct FlowTypeAccess;
  // The type-level records of the wrapped flow.
  template <FixedString S>
  using step_named = FlowTypeAccess::step_named<F, S>;
  using step_list = FlowTypeAccess::step_list<F>;
};

// Copies of a definition with other deployment metadata (src/flow/builder.cc).
std::shared_ptr<const FlowDefinition> with_queue_mode(const FlowDefinition& flow, QueueMode mode);
std::shared_ptr<const FlowDefinition> with_alias(const FlowDefinition& flow, std::string alias);

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_WRAPPED_FLOW_H_
