// File: pgflow/typed_flow.h
//
// pgflow::TypedFlow: what Client and EdgeWorker accept as "a typed flow" — pgflow::Flow
// (flow.h), or a StepQueuedFlow or DeployedFlow wrapping one. Every typed flow has a run
// input type and a runtime definition. This header is light (no DSL), so client.h and
// worker.h include it instead of flow.h.
#ifndef PGFLOW_TYPED_FLOW_H_
#define PGFLOW_TYPED_FLOW_H_

#include <concepts>
#include <type_traits>

#include "pgflow/flow_definition.h"

namespace pgflow {

template <typename F>
concept TypedFlow = requires(const F& flow) {
  typename F::input_type;
  { flow.definition() } -> std::same_as<const FlowDefinition&>;
};

// The run input type of flow type F: `pgflow::FlowInput<decltype(onboard)>` is Signup.
template <typename F>
using FlowInput = typename std::remove_cvref_t<F>::input_type;

}  // namespace pgflow

#endif  // PGFLOW_TYPED_FLOW_H_
