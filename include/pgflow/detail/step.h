// File: pgflow/detail/step.h
//
// NOT API: template machinery of the typed flow DSL (see pgflow/flow.h).
//
// Type-level records of a flow's steps, the tag types behind the DSL's step arguments
// (after<...>, over<...>, when(...), when_unmet_skip, ...), and lookups over them.
#ifndef PGFLOW_DETAIL_STEP_H_
#define PGFLOW_DETAIL_STEP_H_

#include <array>
#include <chrono>
#include <cstddef>
#include <iterator>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "nlohmann/json.hpp"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/slug.h"
#include "pgflow/flow_definition.h"
#include "pgflow/flow_options.h"

namespace pgflow::detail {

// The type-level records of a typed flow's steps, for the DSL's own templates: Flow and the
// flow wrappers keep them private and befriend this.
struct FlowTypeAccess {
  template <typename F, FixedString S>
  using step_named = typename F::template step_named<S>;
  template <typename F>
  using step_list = typename F::step_list;
};

template <typename... Ts>
struct TypeList {
  static constexpr std::size_t size = sizeof...(Ts);
  template <template <typename...> class F>
  using apply = F<Ts...>;
};

template <typename... A, typename... B>
TypeList<A..., B...> operator+(TypeList<A...>, TypeList<B...>);  // type-level concat only

// A list of slugs: the dependencies of a step.
template <FixedString... Slugs>
struct SlugList {
  static constexpr std::size_t size = sizeof...(Slugs);
  template <FixedString S>
  static constexpr bool contains = ((Slugs == S) || ...);
  static constexpr bool has_duplicates() {
    const std::array<std::string_view, sizeof...(Slugs) + 1> all = {Slugs.view()..., {}};
    for (std::size_t i = 0; i < size; ++i) {
      for (std::size_t j = i + 1; j < size; ++j) {
        if (all[i] == all[j]) return true;
      }
    }
    return false;
  }
  static constexpr std::array<std::string_view, sizeof...(Slugs)> views = {Slugs.view()...};
};

template <FixedString... A, FixedString... B>
SlugList<A..., B...> operator+(SlugList<A...>, SlugList<B...>);  // type-level concat only

// What dependents and the run output can expect of a step that may be skipped.
struct SkipTraits {
  // Skipped with mode `skip` (condition unmet or retries exhausted): dependents still run,
  // without this step's output, so they receive it as std::optional<T>.
  bool arrives_optional = false;
  // Skipped with mode `skip-cascade`, or a transitive dependent of such a step: when it is
  // skipped its dependents are skipped too, so those that run always receive a T.
  bool may_cascade = false;
  // May end the run without an output (either of the above): optional in the run output.
  bool may_be_absent = false;
};

// One step of a typed flow, at the type level. The handler lives in the FlowDefinition.
template <FixedString Slug, StepType Type, typename Output, typename Dependencies, SkipTraits Skip>
struct StepTag {
  static constexpr FixedString slug = Slug;
  static constexpr StepType type = Type;
  using output_type = Output;
  using dependencies = Dependencies;
  static constexpr SkipTraits skip = Skip;
};

// Which builder method declared a step (.array is .step with an array check).
enum class StepKind { kStep, kArray, kMap };

// ---- the DSL's step arguments -------------------------------------------------------------

template <FixedString... Slugs>
struct AfterTag {};
template <FixedString... Slugs>
struct OverTag {};
struct IfPattern {
  nlohmann::json pattern;
};
struct IfNotPattern {
  nlohmann::json pattern;
};
template <WhenMode Mode>
struct WhenUnmetTag {};
template <WhenMode Mode>
struct WhenExhaustedTag {};
// A wait step's own arguments (pgflow::signal_timeout, sleep_for, sleep_until): Output is the
// value a timed-out signal wait completes with (void: it fails).
template <typename Output>
struct SignalTimeoutArg {
  std::chrono::seconds timeout;
  Output output;
};
template <>
struct SignalTimeoutArg<void> {
  std::chrono::seconds timeout;
};
struct SleepForArg {
  std::chrono::seconds duration;
};
struct SleepUntilArg {
  std::string path;  // dotted field names of the step's input
};

// Classifies one step argument (everything before the handler).
template <typename T>
struct ArgKind {
  static constexpr bool known = false;
};
template <FixedString... S>
struct ArgKind<AfterTag<S...>> {
  static constexpr bool known = true, is_after = true;
  using deps = SlugList<S...>;
};
template <FixedString... S>
struct ArgKind<OverTag<S...>> {
  static constexpr bool known = true, is_over = true;
  using deps = SlugList<S...>;
};
template <>
struct ArgKind<IfPattern> {
  static constexpr bool known = true, is_if = true;
};
template <>
struct ArgKind<IfNotPattern> {
  static constexpr bool known = true, is_if_not = true;
};
template <WhenMode M>
struct ArgKind<WhenUnmetTag<M>> {
  static constexpr bool known = true, is_unmet = true;
  static constexpr WhenMode mode = M;
};
template <WhenMode M>
struct ArgKind<WhenExhaustedTag<M>> {
  static constexpr bool known = true, is_exhausted = true;
  static constexpr WhenMode mode = M;
};
template <>
struct ArgKind<StepOptions> {
  static constexpr bool known = true, is_options = true;
};
template <typename Output>
struct ArgKind<SignalTimeoutArg<Output>> {
  static constexpr bool known = true, is_signal_timeout = true;
  using output = Output;
};
template <>
struct ArgKind<SleepForArg> {
  static constexpr bool known = true, is_sleep_for = true;
};
template <>
struct ArgKind<SleepUntilArg> {
  static constexpr bool known = true, is_sleep_until = true;
};

template <typename T>
constexpr bool is_after_v = requires {
  requires ArgKind<T>::is_after;
};
template <typename T>
constexpr bool is_over_v = requires {
  requires ArgKind<T>::is_over;
};
template <typename T>
constexpr bool is_if_v = requires {
  requires ArgKind<T>::is_if;
};
template <typename T>
constexpr bool is_if_not_v = requires {
  requires ArgKind<T>::is_if_not;
};
template <typename T>
constexpr bool is_unmet_v = requires {
  requires ArgKind<T>::is_unmet;
};
template <typename T>
constexpr bool is_exhausted_v = requires {
  requires ArgKind<T>::is_exhausted;
};
template <typename T>
constexpr bool is_options_v = requires {
  requires ArgKind<T>::is_options;
};
template <typename T>
constexpr bool is_signal_timeout_v = requires {
  requires ArgKind<T>::is_signal_timeout;
};

// A timed-out signal wait's value `given` as the step's output type, unchanged
// (TimeoutValueFits says which values qualify): a number or bool by braces, which refuse
// narrowing (0 is no bool, 2.5 no int); a JSON output by nlohmann::json's value constructor;
// any other type by an implicit conversion. Never braces for a class: a container's
// initializer-list constructor would make the value its one element ([false], [[1, 2]]).
template <typename Output, typename Given>
concept TimeoutValueFits =
    std::is_same_v<Output, Given> ||
    (std::is_arithmetic_v<Output>&& std::is_arithmetic_v<Given>&& requires(const Given& given) {
      Output{given};
    }) ||
    (std::is_same_v<Output, nlohmann::json> && std::is_constructible_v<Output, const Given&>) ||
    (!std::is_arithmetic_v<Output> && !std::is_same_v<Output, nlohmann::json> &&
     !std::is_same_v<Given, nlohmann::json> && std::is_convertible_v<const Given&, Output>);
template <typename Output, typename Given>
Output timeout_value(const Given& given) {
  if constexpr (std::is_arithmetic_v<Output>) {
    return Output{given};
  } else if constexpr (std::is_same_v<Output, nlohmann::json>) {
    return Output(given);
  } else {
    const Output value = given;
    return value;
  }
}
template <typename T>
constexpr bool is_sleep_for_v = requires {
  requires ArgKind<T>::is_sleep_for;
};
template <typename T>
constexpr bool is_sleep_until_v = requires {
  requires ArgKind<T>::is_sleep_until;
};

template <typename T>
struct DepsOf {
  using type = SlugList<>;
};
template <typename T>
requires(is_after_v<T> || is_over_v<T>) struct DepsOf<T> {
  using type = typename ArgKind<T>::deps;
};

template <typename T>
constexpr int unmet_mode_of() {
  if constexpr (is_unmet_v<T>) return static_cast<int>(ArgKind<T>::mode);
  return -1;
}
template <typename T>
constexpr int exhausted_mode_of() {
  if constexpr (is_exhausted_v<T>) return static_cast<int>(ArgKind<T>::mode);
  return -1;
}

// Everything the type level needs from a step's arguments (handler excluded).
template <typename... Args>
struct StepArgs {
  static constexpr bool all_known = (ArgKind<Args>::known && ...);
  static constexpr int afters = (0 + ... + int{is_after_v<Args>});
  static constexpr int overs = (0 + ... + int{is_over_v<Args>});
  static constexpr int ifs = (0 + ... + int{is_if_v<Args>});
  static constexpr int if_nots = (0 + ... + int{is_if_not_v<Args>});
  static constexpr int unmets = (0 + ... + int{is_unmet_v<Args>});
  static constexpr int exhausteds = (0 + ... + int{is_exhausted_v<Args>});
  static constexpr int options = (0 + ... + int{is_options_v<Args>});
  static constexpr int signal_timeouts = (0 + ... + int{is_signal_timeout_v<Args>});
  static constexpr int sleep_fors = (0 + ... + int{is_sleep_for_v<Args>});
  static constexpr int sleep_untils = (0 + ... + int{is_sleep_until_v<Args>});
  static constexpr int wait_args = signal_timeouts + sleep_fors + sleep_untils;
  static constexpr bool no_repeats = afters <= 1 && overs <= 1 && ifs <= 1 && if_nots <= 1 &&
                                     unmets <= 1 && exhausteds <= 1 && options <= 1 &&
                                     wait_args <= 1;

  using deps = decltype((SlugList<>{} + ... + typename DepsOf<Args>::type{}));

  static constexpr bool has_condition = ifs > 0 || if_nots > 0;
  // -1 when not given.
  static constexpr int unmet = (-1 + ... + (unmet_mode_of<Args>() + 1));
  static constexpr int exhausted = (-1 + ... + (exhausted_mode_of<Args>() + 1));
  // The modes the SQL core will use (the flow-shape values).
  static constexpr WhenMode effective_unmet =
      unmet < 0 ? WhenMode::kSkip : static_cast<WhenMode>(unmet);
  static constexpr WhenMode effective_exhausted =
      exhausted < 0 ? WhenMode::kFail : static_cast<WhenMode>(exhausted);

  // Upstream's inference rule 7 records one "skippable mode" per step (explicit when_unmet
  // skip/skip-cascade wins, else when_exhausted). We track both paths instead, so that a
  // step with when_unmet skip-cascade and when_exhausted skip (skipped without cascade when
  // its handler keeps failing) still reaches its dependents as std::optional.
  static constexpr bool plain_skip = (has_condition && effective_unmet == WhenMode::kSkip) ||
                                     effective_exhausted == WhenMode::kSkip;
  static constexpr bool cascade_skip =
      (has_condition && effective_unmet == WhenMode::kSkipCascade) ||
      effective_exhausted == WhenMode::kSkipCascade;
};

// ---- lookups over a flow's steps ------------------------------------------------------------

// Index of the step called S in Steps..., or sizeof...(Steps) when there is none.
template <FixedString S, typename... Steps>
constexpr std::size_t step_index() {
  constexpr std::array<bool, sizeof...(Steps) + 1> matches = {(Steps::slug == S)..., false};
  for (std::size_t i = 0; i < sizeof...(Steps); ++i) {
    if (matches[i]) return i;
  }
  return sizeof...(Steps);
}

template <FixedString S, typename... Steps>
constexpr bool has_step = step_index<S, Steps...>() < sizeof...(Steps);

// True when some step's slug equals S ignoring case but not exactly.
template <FixedString S, typename... Steps>
constexpr bool has_case_alias =
    ((equal_ignoring_case(Steps::slug.view(), S.view()) && !(Steps::slug == S)) || ...);

template <FixedString S, typename... Steps>
using StepNamed = std::tuple_element_t<step_index<S, Steps...>(), std::tuple<Steps...>>;

// The output type of step Slug of flow (or signature) F (pgflow::StepOutput).
template <typename F, FixedString Slug>
struct StepOutputOf {
  static constexpr bool found = F::template has_step<Slug>;
  static_assert(found, "pgflow: StepOutput<F, \"slug\">: the flow has no step with this slug");
  template <bool Found, typename = void>
  struct Lazy {
    using type = void;
  };
  template <typename Dummy>
  struct Lazy<true, Dummy> {
    using type = typename FlowTypeAccess::step_named<F, Slug>::output_type;
  };
  using type = typename Lazy<found>::type;
};

template <typename Deps, typename... Steps>
struct AllKnown;
template <FixedString... Ds, typename... Steps>
struct AllKnown<SlugList<Ds...>, Steps...> {
  static constexpr bool value = (has_step<Ds, Steps...> && ...);
};

// True when any of Deps may be skipped with skip-cascade (so a dependent may be too).
template <typename Deps, typename... Steps>
struct AnyCascades;
template <FixedString... Ds, typename... Steps>
struct AnyCascades<SlugList<Ds...>, Steps...> {
  static constexpr bool value = (StepNamed<Ds, Steps...>::skip.may_cascade || ...);
};

// The type-level record of step S, declared by a step method of kind Kind with arguments Args,
// whose handler returns (or whose signals carry) Result: a map's output is a std::vector of it.
template <FixedString S, StepKind Kind, typename Result, typename Args, typename... Steps>
struct TagOf {
  static constexpr bool dep_cascades = AnyCascades<typename Args::deps, Steps...>::value;
  static constexpr SkipTraits skip{
      .arrives_optional = Args::plain_skip,
      .may_cascade = Args::cascade_skip || dep_cascades,
      .may_be_absent = Args::plain_skip || Args::cascade_skip || dep_cascades,
  };
  using type = StepTag<S, Kind == StepKind::kMap ? StepType::kMap : StepType::kSingle,
                       std::conditional_t<Kind == StepKind::kMap, std::vector<Result>, Result>,
                       typename Args::deps, skip>;
};

// True when no step of Steps... depends on S.
template <FixedString S, typename... Steps>
constexpr bool is_leaf = (!Steps::dependencies::template contains<S> && ...);

// ---- array types --------------------------------------------------------------------------

template <typename T>
struct is_optional : std::false_type {};
template <typename T>
struct is_optional<std::optional<T>> : std::true_type {};

// A type whose JSON form is an array: nlohmann::json (checked at run time by the SQL core),
// or a range that is neither string-like nor a map.
template <typename T>
concept ArrayLike = std::same_as<T, nlohmann::json> ||(
    requires(const T& t) {
      std::begin(t);
      std::end(t);
      typename T::value_type;
    } &&
    !std::is_convertible_v<const T&, std::string_view> && !requires { typename T::mapped_type; });

template <typename T>
struct ElementOf {
  using type = typename T::value_type;
};
template <>
struct ElementOf<nlohmann::json> {
  using type = nlohmann::json;
};

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_STEP_H_
