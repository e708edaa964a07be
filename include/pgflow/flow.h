// File: pgflow/flow.h
//
// pgflow::Flow: typed flow definitions, checked at compile time.
//
// A flow is a DAG of steps. Each builder call returns a new, immutable Flow whose type
// records every step (slug, output type, dependencies, skip behaviour), so the compiler
// checks what each handler receives and returns:
//
//   struct Signup { std::string email; };            // + to_json/from_json (pgflow/json.h)
//   struct Profile { std::string id; bool vip; };
//   ...
//   inline const auto onboard =
//       pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3, .timeout = 30})
//           .step<"profile">([](const Signup& s) { return Profile{s.email, false}; })
//           .array<"friends">(pgflow::after<"profile">,
//                             [](const Profile& p) { return std::vector<Friend>{}; })
//           .map<"notifyAll">(pgflow::over<"friends">,
//                             [](const Friend& f, pgflow::Context& ctx) { return f.id; })
//           .step<"gift">(pgflow::after<"profile">,
//                         pgflow::when(R"({"profile": {"vip": true}})"_json),
//                         [](const Profile& p) { return Gift{p.id}; })
//           .step<"report">(pgflow::after<"notifyAll", "gift">,
//                           [](const std::vector<std::string>& ids, std::optional<Gift> g) {
//                             return Sent{static_cast<int>(ids.size()), g.has_value()};
//                           });
//
// Steps. `.step<"slug">(args..., handler)` adds a single-task step, `.array<"slug">` one whose
// result must be an array, `.map<"slug">` one task per element of an array. The arguments
// before the handler, in any order, each at most once:
//   pgflow::after<"a", "b">        dependencies (.step/.array); only earlier steps
//   pgflow::over<"a">              the source array of a .map (none: the flow input)
//   pgflow::when(pattern)          run only if the input contains pattern   (upstream `if`)
//   pgflow::unless(pattern)        run only if it does not contain pattern  (upstream `ifNot`)
//   pgflow::when_unmet_{fail,skip,skip_cascade}       condition false  (default skip)
//   pgflow::when_exhausted_{fail,skip,skip_cascade}   retries exhausted (default fail)
//   {.max_attempts = …, .base_delay = …, .timeout = …, .start_delay = …}  (flow_options.h;
//                                  braced, last before the handler; a StepOptions anywhere)
// A condition is tested (PostgreSQL `@>` containment) against the run input for root steps
// and against {dep_slug: output} of the completed dependencies otherwise. Patterns must be
// JSON objects (checked by pgflow::validate()).
//
// Wait steps have no handler: the SQL core completes them, holding no worker (docs/waiting.md).
//   .signal<"slug", Output>(args...)        one task, completed by a signal whose payload (an
//                                           Output) is the step's output: pgflow.send_signal,
//                                           Client::send_signal, `pgflow run signal`
//   .signal_each<"slug", Output>(args...)   one such task per element of over<...>; the output
//                                           is the std::vector of the payloads
//   .sleep<"slug">(args...)                 one task that completes after pgflow::sleep_for(d)
//                                           or at pgflow::sleep_until("dep.field"); output
//                                           pgflow::Slept
// They take after/over, conditions and when_* modes as steps do, no options, and
//   pgflow::signal_timeout(d[, value])      give up after d: fail (when_exhausted applies), or
//                                           complete with value
//
// Handlers. Any const-callable (lambda, function pointer, functor); they run concurrently
// on the worker's pool, so they must be thread-safe. Arguments:
//   root step           (const Input&)
//   dependent step      (const A&, const B&, ...)   outputs of after<"a", "b"> in that order
//   .map                (const Element&)            one element of the source array
// then optionally a trailing pgflow::Context& (context.h). A dependency that may be skipped
// with mode `skip` (its when_unmet, or its when_exhausted, is skip; a condition without
// when_unmet skips) arrives as std::optional<T>; with `skip-cascade` the dependent is
// skipped too, so it arrives as T. A handler returns a JSON-convertible T, void (JSON null),
// absl::Status or absl::StatusOr<T>; a non-OK status or a thrown exception fails the
// attempt with its message. A map step's output is the std::vector of its handler results.
//
// Every rule the types can express is a compile error whose message starts with `pgflow:`:
// slug rules (detail/slug.h), duplicate and case-only duplicate slugs, unknown
// dependencies, map over a non-array, a handler that does not fit its input, a result
// without JSON conversion, when_unmet without a condition, std::optional vs T for skippable
// dependencies, and out-of-range option literals. See docs/flows.md.
#ifndef PGFLOW_FLOW_H_
#define PGFLOW_FLOW_H_

#include <array>
#include <chrono>
#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "pgflow/detail/builder.h"
#include "pgflow/detail/checks.h"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/flow_output.h"
#include "pgflow/detail/handler.h"
#include "pgflow/detail/step.h"
#include "pgflow/flow_definition.h"
#include "pgflow/flow_options.h"
#include "pgflow/flow_signature.h"
#include "pgflow/json.h"
#include "pgflow/typed_flow.h"

namespace pgflow {

// ---- step arguments -------------------------------------------------------------------------

// Dependencies of a .step/.array: `pgflow::after<"profile", "friends">`. The handler receives
// their outputs in this order.
template <detail::FixedString... Slugs>
inline constexpr detail::AfterTag<Slugs...> after{};

// The source array of a .map: `pgflow::over<"friends">`. Without it, a map iterates the
// flow input (which must then be an array type).
template <detail::FixedString... Slugs>
inline constexpr detail::OverTag<Slugs...> over{};

// Run the step only if its condition input contains `pattern` (a JSON object).
inline detail::IfPattern when(nlohmann::json pattern) {
  return detail::IfPattern{std::move(pattern)};
}
// Run the step only if its condition input does not contain `pattern` (a JSON object).
inline detail::IfNotPattern unless(nlohmann::json pattern) {
  return detail::IfNotPattern{std::move(pattern)};
}

// When the condition is not met: fail the run, skip the step (default), or skip it and all
// its dependents. Needs when(...) or unless(...).
inline constexpr detail::WhenUnmetTag<WhenMode::kFail> when_unmet_fail{};
inline constexpr detail::WhenUnmetTag<WhenMode::kSkip> when_unmet_skip{};
inline constexpr detail::WhenUnmetTag<WhenMode::kSkipCascade> when_unmet_skip_cascade{};

// When the last attempt fails: fail the run (default), skip the step, or skip it and all
// its dependents.
inline constexpr detail::WhenExhaustedTag<WhenMode::kFail> when_exhausted_fail{};
inline constexpr detail::WhenExhaustedTag<WhenMode::kSkip> when_exhausted_skip{};
inline constexpr detail::WhenExhaustedTag<WhenMode::kSkipCascade> when_exhausted_skip_cascade{};

// ---- wait step arguments (docs/waiting.md) --------------------------------------------------

// A wait for a signal that gives up after `timeout` (whole seconds, at least 1): the task fails
// at once (a wait is not retried) and the step's when_exhausted mode applies...
inline detail::SignalTimeoutArg<void> signal_timeout(std::chrono::seconds timeout) {
  return {timeout};
}
// ... or, given a value, completes with it (it must convert to the step's output type).
template <typename T>
detail::SignalTimeoutArg<std::decay_t<T>> signal_timeout(std::chrono::seconds timeout, T&& output) {
  return {timeout, std::forward<T>(output)};
}
// A sleep for `duration` (whole seconds, 0 or more) from when the step starts.
inline detail::SleepForArg sleep_for(std::chrono::seconds duration) { return {duration}; }
// A sleep until the ISO 8601 timestamp at `path` of the step's input: dotted field names, the
// first "run" (the run input) or a dependency's slug, e.g. "quote.ship_at". Single steps only.
inline detail::SleepUntilArg sleep_until(std::string path) { return {std::move(path)}; }

// pgflow::Flow<Slug, Input>
//
// An immutable, cheaply copyable typed flow. `Slug` is the flow slug (shared slug rules,
// at most 47 characters); `Input` the run input type (JsonConvertible). Steps... are the
// type-level records the builder methods add; spell the type with `auto` or decltype.
template <detail::FixedString Slug, typename Input, typename... Steps>
class Flow : public detail::StepMethods<Flow<Slug, Input, Steps...>> {
 public:
  using input_type = Input;

  // An empty flow: `pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3})`.
  explicit Flow(FlowOptions options = {}) requires(sizeof...(Steps) == 0)
      : definition_(detail::new_flow(Slug.view(), options)) {
    [[maybe_unused]] constexpr bool slug_ok = detail::check_flow_slug<Slug>();
    static_assert(JsonConvertible<Input>,
                  "pgflow: the flow input type has no JSON conversion; give it nlohmann to_json "
                  "and from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE)");
  }

  static constexpr std::string_view slug() { return Slug.view(); }
  // One queue for all steps (with_step_queues gives each step its own).
  static constexpr QueueMode queue_mode = QueueMode::kFlow;
  static constexpr std::size_t step_count = sizeof...(Steps);
  // Step slugs in declaration order.
  static constexpr std::array<std::string_view, sizeof...(Steps)> step_slugs = {
      Steps::slug.view()...};

  template <detail::FixedString S>
  static constexpr bool has_step = detail::has_step<S, Steps...>;

  // The runtime definition (handlers erased to JSON) that the worker consumes.
  const FlowDefinition& definition() const { return *definition_; }
  std::shared_ptr<const FlowDefinition> shared_definition() const { return definition_; }

  // .step<"slug">(...), .array<"slug">(...), .map<"slug">(...): see the file comment.

 private:
  friend struct detail::FlowTypeAccess;
  // The type-level record of step S, and of all steps.
  template <detail::FixedString S>
  using step_named = detail::StepNamed<S, Steps...>;
  using step_list = detail::TypeList<Steps...>;

  template <detail::FixedString, typename, typename...>
  friend class Flow;
  friend class detail::StepMethods<Flow>;

  explicit Flow(std::shared_ptr<const FlowDefinition> definition)
      : definition_(std::move(definition)) {}

  template <detail::FixedString S, detail::StepKind Kind, typename... A>
  auto add_step(A&&... a) const {
    static_assert(sizeof...(A) > 0, "pgflow: a step needs a handler as its last argument");
    if constexpr (sizeof...(A) == 0) {
      return detail::InvalidFlow{};
    } else {
      return add_step_checked<S, Kind>(std::make_index_sequence<sizeof...(A) - 1>{},
                                       std::forward<A>(a)...);
    }
  }

  // Checks in stages; a failed stage returns InvalidFlow so that later stages (and later
  // steps) add no follow-up errors. I... index the arguments before the handler.
  template <detail::FixedString S, detail::StepKind Kind, std::size_t... I, typename... A>
  auto add_step_checked(std::index_sequence<I...>, A&&... a) const {
    using H = std::decay_t<std::tuple_element_t<sizeof...(I), std::tuple<A...>>>;
    using Args =
        detail::StepArgs<std::remove_cvref_t<std::tuple_element_t<I, std::tuple<A...>>>...>;
    using Deps = typename Args::deps;

    constexpr bool names_ok =
        detail::check_step_slug<S>() && detail::check_unique_slug<S, Steps...>();
    static_assert(Args::wait_args == 0,
                  "pgflow: signal_timeout, sleep_for and sleep_until belong to wait steps "
                  "(.signal, .signal_each, .sleep), which have no handler");
    constexpr bool args_ok =
        names_ok && Args::wait_args == 0 && detail::check_step_args<Kind, Args>();
    constexpr bool deps_ok = args_ok && detail::check_dependencies_known<Kind, Deps, Steps...>();
    if constexpr (!deps_ok) {
      return detail::InvalidFlow{};
    } else {
      constexpr bool source_ok =
          detail::check_source<Kind, Deps::size == 0,
                               typename detail::MapSource<Input, Deps, Steps...>::type>();
      if constexpr (!source_ok) {
        return detail::InvalidFlow{};
      } else {
        using Reader = typename detail::ReaderOf<Kind, Input, Deps, Steps...>::type;
        using ArgList = typename Reader::args;
        using Call = detail::HandlerCall<H, ArgList>;
        using StrippedCall = detail::HandlerCall<H, typename detail::StripOptionals<ArgList>::type>;
        constexpr bool has_optional_args =
            !std::is_same_v<ArgList, typename detail::StripOptionals<ArgList>::type>;
        constexpr bool takes_optional_for_value = Deps::size != 0 &&
                                                  Kind != detail::StepKind::kMap &&
                                                  detail::takes_optional_for_value<H, ArgList>();
        constexpr bool handler_ok =
            detail::check_handler<Call, StrippedCall, has_optional_args, takes_optional_for_value,
                                  detail::params_change_values<H, ArgList>()>();
        if constexpr (!handler_ok) {
          return detail::InvalidFlow{};
        } else {
          using Returned = typename Call::template Result<>::type;
          using Result = typename detail::HandlerResult<Returned>::value;
          if constexpr (!detail::check_output<Kind, Result, Returned>()) {
            return detail::InvalidFlow{};
          } else {
            using Tag = typename detail::TagOf<S, Kind, Result, Args, Steps...>::type;

            StepDefinition step = detail::new_step(
                S.view(), Tag::type, Deps::views, Args::effective_unmet, Args::effective_exhausted);
            // Runtime arguments (patterns, options) fill the step; the handler and the tags pass through.
            (detail::apply_step_arg(step, std::forward<A>(a)), ...);
            return Flow<Slug, Input, Steps..., Tag>(detail::append_step(
                *definition_, std::move(step),
                detail::make_step_handler<Reader>(detail::StepNames{Slug.view(), S.view()},
                                                  detail::last_arg(std::forward<A>(a)...))));
          }
        }
      }
    }
  }

  // A wait step (.signal, .signal_each, .sleep): the checks of a step without a handler, and
  // those of its wait; Output is its payload type (.sleep: pgflow::Slept).
  template <detail::FixedString S, detail::StepKind Kind, typename Output, WaitDefinition::Kind W,
            typename... A>
  auto add_wait(A&&... a) const {
    using Args = detail::StepArgs<std::remove_cvref_t<A>...>;
    using Deps = typename Args::deps;
    constexpr bool names_ok =
        detail::check_step_slug<S>() && detail::check_unique_slug<S, Steps...>();
    constexpr bool args_ok = names_ok && detail::check_step_args<Kind, Args>() &&
                             detail::check_wait_args<W, Output, Args, std::remove_cvref_t<A>...>();
    constexpr bool deps_ok = args_ok && detail::check_dependencies_known<Kind, Deps, Steps...>();
    if constexpr (!deps_ok) {
      return detail::InvalidFlow{};
    } else {
      constexpr bool source_ok =
          detail::check_source<Kind, Deps::size == 0,
                               typename detail::MapSource<Input, Deps, Steps...>::type>();
      if constexpr (!source_ok) {
        return detail::InvalidFlow{};
      } else {
        using Tag = typename detail::TagOf<S, Kind, Output, Args, Steps...>::type;
        StepDefinition step = detail::new_step(S.view(), Tag::type, Deps::views,
                                               Args::effective_unmet, Args::effective_exhausted);
        step.wait = WaitDefinition{.kind = W};
        (detail::apply_wait_arg<Output>(step, std::forward<A>(a)), ...);
        return Flow<Slug, Input, Steps..., Tag>(
            detail::append_step(*definition_, std::move(step), StepHandler{}));
      }
    }
  }

  std::shared_ptr<const FlowDefinition> definition_;
};

namespace detail {

template <typename Step, typename List>
struct IsLeafIn;
template <typename Step, typename... Steps>
struct IsLeafIn<Step, TypeList<Steps...>> {
  static constexpr bool value = is_leaf<Step::slug, Steps...>;
};

// Step I of a flow's steps against step I of its signature's (both TypeLists).
template <typename FlowSteps, typename SigSteps, std::size_t I>
constexpr bool matches_signature_step() {
  using Mine = std::tuple_element_t<I, typename FlowSteps::template apply<std::tuple>>;
  using Declared = std::tuple_element_t<I, typename SigSteps::template apply<std::tuple>>;
  constexpr bool slug_ok = Mine::slug == Declared::slug;
  static_assert(slug_ok,
                "pgflow: the flow does not match its signature: a step slug differs (the "
                "signature lists every step, in declaration order)");
  if constexpr (!slug_ok) {
    return false;
  } else {
    constexpr bool output_ok =
        std::is_same_v<typename Mine::output_type, typename Declared::output_type>;
    static_assert(output_ok,
                  "pgflow: the flow does not match its signature: a step's output type differs "
                  "(a map step's output is the std::vector of its handler's result)");
    constexpr bool leaf = IsLeafIn<Mine, FlowSteps>::value;
    constexpr bool leaf_ok = leaf == Declared::leaf;
    static_assert(leaf_ok || !output_ok,
                  "pgflow: the flow does not match its signature: a step nothing depends on must "
                  "be a pgflow::Leaf (or OptionalLeaf), every other step a pgflow::Step");
    constexpr bool absent_ok =
        !leaf || !leaf_ok || Mine::skip.may_be_absent == Declared::skip.may_be_absent;
    static_assert(absent_ok || !output_ok,
                  "pgflow: the flow does not match its signature: a leaf that may be skipped is a "
                  "pgflow::OptionalLeaf, one that cannot a pgflow::Leaf");
    return output_ok && leaf_ok && absent_ok;
  }
}

template <typename FlowSteps, typename SigSteps, std::size_t... I>
constexpr bool matches_signature_steps(std::index_sequence<I...>) {
  return (matches_signature_step<FlowSteps, SigSteps, I>() && ...);
}

template <typename Sig, typename F>
constexpr bool matches_signature() {
  constexpr bool deployed = requires(const F& f) { f.alias(); };  // a DeployedFlow
  static_assert(!deployed,
                "pgflow: a signature names a plain flow or its step-queued form; a DeployedFlow's "
                "alias is known only at run time (wrap the version's flow, or start the alias by "
                "name)");
  constexpr bool slug_ok = deployed || Sig::slug() == F::slug();
  static_assert(slug_ok, "pgflow: the flow does not match its signature: the flow slug differs");
  constexpr bool input_ok = std::is_same_v<typename Sig::input_type, typename F::input_type>;
  static_assert(input_ok, "pgflow: the flow does not match its signature: the input type differs");
  constexpr bool count_ok = Sig::step_count == F::step_count;
  static_assert(count_ok,
                "pgflow: the flow does not match its signature: it has another number of steps "
                "(the signature lists every step, in declaration order)");
  if constexpr (deployed || !(slug_ok && input_ok && count_ok)) {
    return false;
  } else {
    return matches_signature_steps<FlowTypeAccess::step_list<F>, FlowTypeAccess::step_list<Sig>>(
        std::make_index_sequence<F::step_count>{});
  }
}

template <typename F>
struct IsFlow : std::false_type {};
template <FixedString Slug, typename Input, typename... Steps>
struct IsFlow<Flow<Slug, Input, Steps...>> : std::true_type {};
}  // namespace detail

// ---- type utilities (TypedFlow and FlowInput: typed_flow.h) ---------------------------------

// StepOutput, FlowOutput and step_slugs: pgflow/flow_signature.h.

// pgflow::implements<Signature>(flow): `flow`, unchanged, if it matches its signature
// (pgflow/flow_signature.h); otherwise a compile error that names the first difference. Wrap
// the flow's definition in it where the two are both visible (the worker's TU), so a producer's
// signature cannot drift from the flow it starts:
//
//   const auto flow = pgflow::implements<orders::Signature>(pgflow::Flow<"processOrder", ...);
template <typename Signature, TypedFlow F>
F implements(F flow) {
  [[maybe_unused]] constexpr bool matches = detail::matches_signature<Signature, F>();
  return flow;
}
// Not API: a flow that failed a compile-time check was reported where it was built.
template <typename Signature>
detail::InvalidFlow implements(detail::InvalidFlow flow) {
  return flow;
}

// The flow shape of a typed flow (see shape_of(const FlowDefinition&)).
template <TypedFlow F>
nlohmann::ordered_json shape_of(const F& flow) {
  return shape_of(flow.definition());
}

// Not API: accept flows whose definition failed a compile-time check (see detail::InvalidFlow).
inline nlohmann::ordered_json shape_of(const detail::InvalidFlow& flow) {
  return shape_of(flow.definition());
}
inline absl::Status validate(const detail::InvalidFlow& flow) {
  return validate(flow.definition());
}

// validate() of a typed flow's definition: only runtime values can fail here (patterns
// that are not JSON objects, option values given through pgflow::runtime()).
template <TypedFlow F>
absl::Status validate(const F& flow) {
  return validate(flow.definition());
}

}  // namespace pgflow

#endif  // PGFLOW_FLOW_H_
