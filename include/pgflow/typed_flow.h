// File: pgflow/typed_flow.h
//
// pgflow::TypedFlow: what Client and EdgeWorker accept as "a typed flow" — pgflow::Flow
// (flow.h), or a StepQueuedFlow or DeployedFlow wrapping one. Every typed flow has a run
// input type and a runtime definition. pgflow::StartableFlow: what the typed starts of an
// alias accept — a typed flow, or a flow's signature (flow_signature.h), which has no
// definition. This header is light (no DSL), so client.h and worker.h include it instead of
// flow.h.
#ifndef PGFLOW_TYPED_FLOW_H_
#define PGFLOW_TYPED_FLOW_H_

#include <concepts>
#include <string>
#include <string_view>
#include <type_traits>

#include "pgflow/flow_definition.h"

namespace pgflow {

template <typename F>
concept TypedFlow = requires(const F& flow) {
  typename F::input_type;
  { flow.definition() } -> std::same_as<const FlowDefinition&>;
};

// A flow's signature (pgflow::FlowSignature): an alias and a run input type, no handlers.
template <typename F>
concept FlowSignatureLike = requires {
  typename F::input_type;
  { F::alias() } -> std::same_as<std::string_view>;
};

template <typename F>
concept StartableFlow = TypedFlow<F> || FlowSignatureLike<F>;

namespace detail {
// The alias a typed start of `flow` starts.
template <StartableFlow F>
std::string start_alias(const F& flow) {
  if constexpr (TypedFlow<F>) {
    return alias_of(flow.definition());
  } else {
    return std::string(F::alias());
  }
}
}  // namespace detail

// The run input type of flow (or signature) type F: `pgflow::FlowInput<decltype(onboard)>` is Signup.
template <typename F>
using FlowInput = typename std::remove_cvref_t<F>::input_type;

}  // namespace pgflow

#endif  // PGFLOW_TYPED_FLOW_H_
