// File: pgflow/detail/checks.h
//
// NOT API: the DSL's compile-time rules, as static_asserts whose sentences start with
// `pgflow:` and say what to do. Each check returns whether it passed, so Flow::step can stop
// before later checks pile follow-up errors onto the first one.
#ifndef PGFLOW_DETAIL_CHECKS_H_
#define PGFLOW_DETAIL_CHECKS_H_

#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/slug.h"
#include "pgflow/detail/step.h"
#include "pgflow/json.h"

namespace pgflow::detail {

template <FixedString Slug>
constexpr bool check_flow_slug() {
  constexpr SlugProblem p = slug_problem(Slug.view());
  static_assert(p != SlugProblem::kEmpty,
                "pgflow: the flow slug cannot be empty; name the flow, e.g. "
                "pgflow::Flow<\"onboardUser\", Input>");
  static_assert(p != SlugProblem::kTooLong,
                "pgflow: a flow slug can be at most 47 characters long (it names the flow's "
                "queue); shorten it");
  static_assert(p != SlugProblem::kInvalidCharacter,
                "pgflow: a flow slug can contain only ASCII letters, digits and single "
                "underscores; rename it (camelCase works)");
  static_assert(p != SlugProblem::kLeadingDigit,
                "pgflow: a flow slug must start with a letter, not a digit; rename it");
  static_assert(p != SlugProblem::kLeadingUnderscore,
                "pgflow: a flow slug must start with a letter, not '_'; rename it");
  static_assert(p != SlugProblem::kTrailingUnderscore,
                "pgflow: a flow slug cannot end with '_'; remove the trailing underscore");
  static_assert(p != SlugProblem::kDoubleUnderscore,
                "pgflow: a flow slug cannot contain '__' (reserved for generated queue names); use "
                "one underscore or camelCase");
  static_assert(p != SlugProblem::kReserved,
                "pgflow: 'run' is reserved and cannot be a flow slug; choose another name");
  // Checked separately so the message names the queue-name limit.
  static_assert(p != SlugProblem::kNone || Slug.size() <= kMaxFlowSlugLength,
                "pgflow: a flow slug can be at most 47 characters long, because lower(flow_slug) "
                "names the flow's PGMQ queue; shorten it");
  return p == SlugProblem::kNone && Slug.size() <= kMaxFlowSlugLength;
}

template <FixedString Slug>
constexpr bool check_step_slug() {
  constexpr SlugProblem p = slug_problem(Slug.view());
  static_assert(
      p != SlugProblem::kEmpty,
      "pgflow: a step slug cannot be empty; name the step, e.g. .step<\"fetchUser\">(...)");
  static_assert(p != SlugProblem::kTooLong,
                "pgflow: a step slug can be at most 128 characters long; shorten it");
  static_assert(p != SlugProblem::kInvalidCharacter,
                "pgflow: a step slug can contain only ASCII letters, digits and single "
                "underscores; rename it (camelCase works)");
  static_assert(p != SlugProblem::kLeadingDigit,
                "pgflow: a step slug must start with a letter, not a digit; rename it");
  static_assert(p != SlugProblem::kLeadingUnderscore,
                "pgflow: a step slug must start with a letter, not '_'; rename it");
  static_assert(p != SlugProblem::kTrailingUnderscore,
                "pgflow: a step slug cannot end with '_'; remove the trailing underscore");
  static_assert(p != SlugProblem::kDoubleUnderscore,
                "pgflow: a step slug cannot contain '__' (reserved for generated queue names); use "
                "one underscore or camelCase");
  static_assert(p != SlugProblem::kReserved,
                "pgflow: 'run' is reserved and cannot be a step slug; choose another name");
  return p == SlugProblem::kNone;
}

template <FixedString Slug, typename... Steps>
constexpr bool check_unique_slug() {
  constexpr bool duplicate = has_step<Slug, Steps...>;
  constexpr bool alias = !duplicate && has_case_alias<Slug, Steps...>;
  static_assert(
      !duplicate,
      "pgflow: this flow already has a step with this slug; give every step a unique slug");
  static_assert(!alias,
                "pgflow: this step slug differs from an earlier step's slug only in letter case "
                "(like fetch and Fetch); slugs must differ in more than case, rename one");
  return !duplicate && !alias;
}

template <StepKind Kind, typename Args>
constexpr bool check_step_args() {
  static_assert(
      Args::all_known,
      "pgflow: unexpected step argument; a step takes, in any order, pgflow::after<...> (.map: "
      "pgflow::over<...>), pgflow::when(pattern), pgflow::unless(pattern), a pgflow::when_unmet_* "
      "and a pgflow::when_exhausted_* mode and step options {...}, then the handler last");
  static_assert(!Args::all_known || Args::no_repeats,
                "pgflow: a step argument kind is repeated; give at most one after<...>, when(...), "
                "unless(...), when_unmet_*, when_exhausted_* and options {...} (list all "
                "dependencies in one after<...>)");
  constexpr bool shape_ok = Args::all_known && Args::no_repeats;
  constexpr bool map_with_after = shape_ok && Kind == StepKind::kMap && Args::afters > 0;
  constexpr bool step_with_over = shape_ok && Kind != StepKind::kMap && Args::overs > 0;
  static_assert(!map_with_after,
                "pgflow: a .map() step names its source array with pgflow::over<\"slug\">, not "
                "after<...>; a map step has at most one dependency, its source");
  static_assert(!step_with_over,
                "pgflow: over<...> is only for .map() steps; use pgflow::after<...> to depend on "
                "other steps");
  constexpr bool empty_after = shape_ok && Args::afters > 0 && Args::deps::size == 0;
  static_assert(!empty_after,
                "pgflow: after<> needs at least one step slug; leave it out for a root step");
  constexpr bool bad_over = shape_ok && Args::overs > 0 && Args::deps::size != 1;
  static_assert(
      !bad_over,
      "pgflow: over<...> takes exactly one slug, the step whose array output the map iterates");
  constexpr bool duplicate_dep = shape_ok && Args::deps::has_duplicates();
  static_assert(!duplicate_dep,
                "pgflow: a dependency is listed twice in after<...>; list each step once");
  constexpr bool unmet_without_condition = shape_ok && Args::unmets > 0 && !Args::has_condition;
  static_assert(!unmet_without_condition,
                "pgflow: when_unmet_* needs a condition; add pgflow::when(pattern) or "
                "pgflow::unless(pattern), or remove the when_unmet mode");
  return shape_ok && !map_with_after && !step_with_over && !empty_after && !bad_over &&
         !duplicate_dep && !unmet_without_condition;
}

// A timed-out signal wait completes with a value of the step's output type, converted without
// narrowing (a conversion never changes a value: 0 is no bool, 2.5 no int).
template <typename Output, typename Arg>
constexpr bool timeout_output_fits() {
  if constexpr (is_signal_timeout_v<Arg>) {
    using Given = typename ArgKind<Arg>::output;
    if constexpr (std::is_void_v<Given>) {
      return true;
    } else {
      return TimeoutValueFits<Output, Given>;
    }
  } else {
    return true;
  }
}

// The arguments of a wait step (.signal, .signal_each, .sleep), beyond check_step_args.
template <WaitDefinition::Kind W, typename Output, typename Args, typename... A>
constexpr bool check_wait_args() {
  static_assert(JsonConvertible<Output>,
                "pgflow: a signal's payload type (the step's output) has no JSON conversion; give "
                "it nlohmann to_json and from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE)");
  static_assert(Args::options == 0,
                "pgflow: a wait step takes no step options {...}: it has no handler, attempts or "
                "timeout of its own (give a signal's timeout with pgflow::signal_timeout)");
  constexpr bool signal = W == WaitDefinition::Kind::kSignal;
  // A signal wait has no sleep; a sleep has exactly one, and no signal timeout.
  constexpr bool sleeps_ok = Args::sleep_fors + Args::sleep_untils == (signal ? 0 : 1);
  constexpr bool timeouts_ok = signal || Args::signal_timeouts == 0;
  static_assert(!signal || sleeps_ok,
                "pgflow: .signal/.signal_each wait for a signal: they take "
                "pgflow::signal_timeout(...), not sleep_for/sleep_until");
  static_assert(signal || (sleeps_ok && timeouts_ok),
                "pgflow: .sleep needs one pgflow::sleep_for(duration) or "
                "pgflow::sleep_until(\"path.in.input\"), and no signal_timeout");
  constexpr bool output_fits = (timeout_output_fits<Output, A>() && ...);
  static_assert(output_fits,
                "pgflow: the value of pgflow::signal_timeout(timeout, value) must convert to the "
                "step's output type without narrowing (a timed-out wait completes with it)");
  return JsonConvertible<Output> && Args::options == 0 && sleeps_ok && timeouts_ok && output_fits;
}

template <StepKind Kind, typename Deps, typename... Steps>
constexpr bool check_dependencies_known() {
  constexpr bool known = AllKnown<Deps, Steps...>::value;
  static_assert(known || Kind == StepKind::kMap,
                "pgflow: after<...> names a step that this flow does not define before this one; "
                "declare that step first (a step can only depend on earlier steps)");
  static_assert(known || Kind != StepKind::kMap,
                "pgflow: over<...> names a step that this flow does not define before this one; "
                "declare the source step first");
  return known;
}

template <bool RootMap, typename Source>
constexpr bool check_map_source() {
  constexpr bool array = ArrayLike<Source>;
  static_assert(array || !RootMap,
                "pgflow: a root .map() step iterates the flow input, but the flow's input type is "
                "not an array; make the input an array type (std::vector<T>, ...) or give the map "
                "a source with pgflow::over<\"slug\">");
  static_assert(
      array || RootMap,
      "pgflow: .map() iterates its source step's output, but that output type is not an array "
      "(std::vector<T>, std::array, nlohmann::json, ...); return an array from the source step");
  return array;
}

// check_map_source for map steps; true for the others.
template <StepKind Kind, bool RootMap, typename Source>
constexpr bool check_source() {
  if constexpr (Kind == StepKind::kMap) {
    return check_map_source<RootMap, Source>();
  } else {
    return true;
  }
}

// Call: HandlerCall<H, Args>; StrippedCall: the same with skip-mode optionals unwrapped.
template <typename Call, typename StrippedCall, bool HasOptionalArgs, bool TakesOptionalForValue,
          bool ParamsChangeValues>
constexpr bool check_handler() {
  constexpr bool callable = Call::callable;
  constexpr bool needs_optional = !callable && HasOptionalArgs && StrippedCall::callable;
  constexpr bool mutable_handler = !callable && !needs_optional && Call::callable_if_mutable;
  static_assert(!needs_optional,
                "pgflow: a dependency in after<...> is skipped with mode skip (when_unmet or "
                "when_exhausted), so the handler must take it as std::optional<T>; a skipped "
                "dependency arrives as std::nullopt");
  static_assert(
      !mutable_handler,
      "pgflow: the handler must be callable as const (not a mutable lambda): handlers run "
      "concurrently on the worker's thread pool; keep shared state outside and thread-safe");
  static_assert(callable || needs_optional || mutable_handler,
                "pgflow: the handler cannot be called with this step's input; a root step takes "
                "the flow input, a dependent step takes its dependencies' outputs in after<...> "
                "order (std::optional<T> for skip-mode ones), a map step takes one array element; "
                "a trailing pgflow::Context& is optional");
  static_assert(
      !callable || !TakesOptionalForValue,
      "pgflow: the handler takes std::optional<T> for a dependency that always has a value (it is "
      "not skippable, or skips with skip-cascade, which skips this step too); take it as T");
  static_assert(
      !callable || !ParamsChangeValues,
      "pgflow: the handler takes a value as another type than the step gives it (a number as "
      "a type that cannot hold all its values, or nlohmann::json as a typed value): C++ would "
      "convert it without pgflow's exact checks, and could change it (2.5 to 2, -1 to "
      "4294967295); take the flow input, dependency output or element as its own type");
  return callable && !TakesOptionalForValue && !ParamsChangeValues;
}

// Output: the stored result type; Returned: what the handler returns (e.g. absl::StatusOr<Output>),
// a parameter only so that diagnostics show it.
template <StepKind Kind, typename Output, typename Returned>
constexpr bool check_output() {
  constexpr bool json = JsonConvertible<Output>;
  static_assert(json,
                "pgflow: the handler's result type has no JSON conversion; give it nlohmann "
                "to_json and from_json (e.g. NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE), or return void, "
                "absl::Status or absl::StatusOr<T> of a JSON type");
  constexpr bool array_ok = Kind != StepKind::kArray || !json || ArrayLike<Output>;
  static_assert(array_ok,
                "pgflow: an .array() step must return an array (std::vector<T>, std::array, "
                "nlohmann::json, ...); use .step() for other results");
  return json && array_ok;
}

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_CHECKS_H_
