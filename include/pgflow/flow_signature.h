// File: pgflow/flow_signature.h
//
// pgflow::FlowSignature: what a producer needs to know about a flow — its slug, its input type
// and each step's output type — without its handlers. A program that only starts runs and reads
// their results (an API server) includes the flow's signature and pgflow/client.h: it compiles
// no handler and links none of the worker's code.
//
//   // flows/orders_signature.h: types and signature, shared by producers and the worker
//   using Signature = pgflow::FlowSignature<"processOrder", Order,
//                                           pgflow::Step<"lines", std::vector<Line>>,
//                                           pgflow::Step<"reserve", std::vector<int>>,
//                                           pgflow::Step<"charge", Receipt>,
//                                           pgflow::Leaf<"confirm", std::string>>;
//
//   // producer.cc
//   client->start_run(orders::Signature{}, order);                 // typed: Order, checked
//   done->output_as<pgflow::FlowOutput<orders::Signature>>();      // {confirm: std::string}
//   run->step("charge")->output_as<pgflow::StepOutput<orders::Signature, "charge">>();
//
//   // orders_flow.cc (the worker's): the flow must match its signature, or it does not compile
//   const auto flow = pgflow::implements<orders::Signature>(
//       pgflow::Flow<"processOrder", Order>().array<"lines">(...)...);
//
// Entries list every step in declaration order: pgflow::Step<"slug", Output> for a step another
// step depends on, pgflow::Leaf for a step nothing depends on (part of the run output), and
// pgflow::OptionalLeaf for a leaf that may be skipped (std::optional in FlowOutput). A map
// step's output is the std::vector of its handler's result. pgflow::implements (pgflow/flow.h)
// checks slug, input type, steps, output types and leaves against the flow at compile time.
// The typed starts accept a signature where they start the flow's alias (start_flow,
// start_flow_by_alias, start_run, start_run_idempotent); a signature names a plain flow (or its
// step-queued form), whose alias is its slug. See docs/flows.md, "Large codebases".
#ifndef PGFLOW_FLOW_SIGNATURE_H_
#define PGFLOW_FLOW_SIGNATURE_H_

#include <array>
#include <cstddef>
#include <string_view>
#include <type_traits>

#include "pgflow/detail/checks.h"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/flow_output.h"
#include "pgflow/detail/step.h"
#include "pgflow/json.h"

namespace pgflow {

namespace detail {

// One step of a signature: its slug, output type, and whether it is a leaf (and may be absent
// from the run output).
template <FixedString Slug, typename Output, bool IsLeaf, bool MayBeAbsent>
struct SignatureStep {
  static_assert(JsonConvertible<Output>,
                "pgflow: a step output type in a flow signature has no JSON conversion");
  static constexpr FixedString slug = Slug;
  using output_type = Output;
  static constexpr bool leaf = IsLeaf;
  static constexpr SkipTraits skip{
      .arrives_optional = false, .may_cascade = false, .may_be_absent = MayBeAbsent};
};

template <typename T>
struct IsSignatureStep : std::false_type {};
template <FixedString Slug, typename Output, bool IsLeaf, bool MayBeAbsent>
struct IsSignatureStep<SignatureStep<Slug, Output, IsLeaf, MayBeAbsent>> : std::true_type {};

}  // namespace detail

// A step that other steps depend on, and its output type.
template <detail::FixedString Slug, typename Output>
using Step = detail::SignatureStep<Slug, Output, false, false>;
// A leaf step (nothing depends on it): part of the run output.
template <detail::FixedString Slug, typename Output>
using Leaf = detail::SignatureStep<Slug, Output, true, false>;
// A leaf step that may be skipped: std::optional<Output> in the run output.
template <detail::FixedString Slug, typename Output>
using OptionalLeaf = detail::SignatureStep<Slug, Output, true, true>;

// pgflow::FlowSignature<Slug, Input, Steps...>: see the file comment. An empty type: pass
// `Signature{}` where a typed start takes the flow.
template <detail::FixedString Slug, typename Input, typename... Steps>
class FlowSignature {
  static_assert(detail::check_flow_slug<Slug>());
  static_assert(JsonConvertible<Input>,
                "pgflow: the flow input type of a signature has no JSON conversion; give it "
                "nlohmann to_json and from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE)");
  static_assert((detail::IsSignatureStep<Steps>::value && ...),
                "pgflow: a flow signature lists its steps as pgflow::Step<\"slug\", Output>, "
                "pgflow::Leaf<...> or pgflow::OptionalLeaf<...>");

 public:
  using input_type = Input;
  // The alias typed starts start: a plain flow's slug.
  static constexpr std::string_view alias() { return Slug.view(); }
  static constexpr std::string_view slug() { return Slug.view(); }
  static constexpr std::size_t step_count = sizeof...(Steps);
  static constexpr std::array<std::string_view, sizeof...(Steps)> step_slugs = {
      Steps::slug.view()...};
  template <detail::FixedString S>
  static constexpr bool has_step = detail::has_step<S, Steps...>;

 private:
  friend struct detail::FlowTypeAccess;
  template <detail::FixedString S>
  using step_named = detail::StepNamed<S, Steps...>;
  using step_list = detail::TypeList<Steps...>;
};

// ---- type utilities of flows and signatures (TypedFlow and FlowInput: typed_flow.h) ----------

// The output type of step `Slug` (a map step: std::vector of its handler's result).
template <typename F, detail::FixedString Slug>
using StepOutput = typename detail::StepOutputOf<std::remove_cvref_t<F>, Slug>::type;

// The run output: the leaf steps (no other step depends on them) by slug, std::optional for
// leaves that may be skipped. JSON-convertible; `out.get<"report">()`.
template <typename F>
using FlowOutput = typename detail::FlowTypeAccess::step_list<
    std::remove_cvref_t<F>>::template apply<detail::FlowOutputOf>::type;

// Step slugs of flow (or signature) type F in declaration order, as
// std::array<std::string_view, N>.
template <typename F>
inline constexpr auto step_slugs = std::remove_cvref_t<F>::step_slugs;

}  // namespace pgflow

#endif  // PGFLOW_FLOW_SIGNATURE_H_
