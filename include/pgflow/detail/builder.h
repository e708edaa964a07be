// File: pgflow/detail/builder.h
//
// NOT API: template machinery of the typed flow DSL (see pgflow/flow.h): the step/array/map
// overload set, the placeholder returned after a failed check, the non-template halves of
// adding a step (src/flow/builder.cc), and the type computations behind each step's reader.
#ifndef PGFLOW_DETAIL_BUILDER_H_
#define PGFLOW_DETAIL_BUILDER_H_

#include <cstddef>
#include <memory>
#include <span>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/handler.h"
#include "pgflow/detail/step.h"
#include "pgflow/flow_definition.h"
#include "pgflow/flow_options.h"

namespace pgflow::detail {

// The public step/array/map overloads, shared by Flow and InvalidFlow. The overloads with a
// StepOptions parameter let `{.timeout = 10}` be written without naming the type.
template <typename Derived>
class StepMethods {
 public:
#define PGFLOW_DETAIL_STEP_METHOD(name, kind)                                                   \
  template <FixedString S, typename... A>                                                       \
  [[nodiscard]] auto name(A&&... a) const {                                                     \
    return self().template add_step<S, kind>(std::forward<A>(a)...);                            \
  }                                                                                             \
  template <FixedString S, typename H>                                                          \
  [[nodiscard]] auto name(StepOptions o, H&& h) const {                                         \
    return self().template add_step<S, kind>(std::move(o), std::forward<H>(h));                 \
  }                                                                                             \
  template <FixedString S, typename M1, typename H>                                             \
  [[nodiscard]] auto name(M1&& m1, StepOptions o, H&& h) const {                                \
    return self().template add_step<S, kind>(std::forward<M1>(m1), std::move(o),                \
                                             std::forward<H>(h));                               \
  }                                                                                             \
  template <FixedString S, typename M1, typename M2, typename H>                                \
  [[nodiscard]] auto name(M1&& m1, M2&& m2, StepOptions o, H&& h) const {                       \
    return self().template add_step<S, kind>(std::forward<M1>(m1), std::forward<M2>(m2),        \
                                             std::move(o), std::forward<H>(h));                 \
  }                                                                                             \
  template <FixedString S, typename M1, typename M2, typename M3, typename H>                   \
  [[nodiscard]] auto name(M1&& m1, M2&& m2, M3&& m3, StepOptions o, H&& h) const {              \
    return self().template add_step<S, kind>(std::forward<M1>(m1), std::forward<M2>(m2),        \
                                             std::forward<M3>(m3), std::move(o),                \
                                             std::forward<H>(h));                               \
  }                                                                                             \
  template <FixedString S, typename M1, typename M2, typename M3, typename M4, typename H>      \
  [[nodiscard]] auto name(M1&& m1, M2&& m2, M3&& m3, M4&& m4, StepOptions o, H&& h) const {     \
    return self().template add_step<S, kind>(std::forward<M1>(m1), std::forward<M2>(m2),        \
                                             std::forward<M3>(m3), std::forward<M4>(m4),        \
                                             std::move(o), std::forward<H>(h));                 \
  }                                                                                             \
  template <FixedString S, typename M1, typename M2, typename M3, typename M4, typename M5,     \
            typename H>                                                                         \
  [[nodiscard]] auto name(M1&& m1, M2&& m2, M3&& m3, M4&& m4, M5&& m5, StepOptions o, H&& h)    \
      const {                                                                                   \
    return self().template add_step<S, kind>(                                                   \
        std::forward<M1>(m1), std::forward<M2>(m2), std::forward<M3>(m3), std::forward<M4>(m4), \
        std::forward<M5>(m5), std::move(o), std::forward<H>(h));                                \
  }

  // A single-task step.
  PGFLOW_DETAIL_STEP_METHOD(step, StepKind::kStep)
  // A single-task step whose result must be an array (sugar for .step with a check).
  PGFLOW_DETAIL_STEP_METHOD(array, StepKind::kArray)
  // One task per element of the over<...> step's array output (or of the flow input).
  PGFLOW_DETAIL_STEP_METHOD(map, StepKind::kMap)
#undef PGFLOW_DETAIL_STEP_METHOD

  // Wait steps (pgflow/flow.h, docs/waiting.md): no handler, the SQL core completes them.
  // A single task whose output is a signal's payload (of type Output).
  template <FixedString S, typename Output, typename... A>
  [[nodiscard]] auto signal(A&&... a) const {
    return self().template add_wait<S, StepKind::kStep, Output, WaitDefinition::Kind::kSignal>(
        std::forward<A>(a)...);
  }
  // One task per element of the over<...> array, each completed by its own signal.
  template <FixedString S, typename Output, typename... A>
  [[nodiscard]] auto signal_each(A&&... a) const {
    return self().template add_wait<S, StepKind::kMap, Output, WaitDefinition::Kind::kSignal>(
        std::forward<A>(a)...);
  }
  // A single task that completes when its sleep ends, with pgflow::Slept.
  template <FixedString S, typename... A>
  [[nodiscard]] auto sleep(A&&... a) const {
    return self().template add_wait<S, StepKind::kStep, Slept, WaitDefinition::Kind::kSleep>(
        std::forward<A>(a)...);
  }

 private:
  const Derived& self() const { return static_cast<const Derived&>(*this); }
};

// What a step call returns after a failed compile-time check: accepts further steps without
// checking them, so the first error is not followed by a cascade of unrelated ones.
class InvalidFlow : public StepMethods<InvalidFlow> {
 public:
  // Only so that uses of a flow whose definition failed to compile add no errors of their own;
  // a program containing an InvalidFlow never compiles, so these never run.
  using input_type = nlohmann::json;
  const FlowDefinition& definition() const { return *shared_definition(); }
  std::shared_ptr<const FlowDefinition> shared_definition() const {
    return std::make_shared<const FlowDefinition>();
  }

 private:
  friend class StepMethods<InvalidFlow>;
  template <FixedString S, StepKind Kind, typename... A>
  InvalidFlow add_step(A&&...) const {
    return {};
  }
  template <FixedString S, StepKind Kind, typename Output, WaitDefinition::Kind W, typename... A>
  InvalidFlow add_wait(A&&...) const {
    return {};
  }
};

// The runtime half of adding a step, kept out of the templates (src/flow/builder.cc) so that
// each step costs the compiler only its types and its handler.
StepDefinition new_step(std::string_view slug, StepType type,
                        std::span<const std::string_view> dependencies, WhenMode when_unmet,
                        WhenMode when_exhausted);
std::shared_ptr<const FlowDefinition> append_step(const FlowDefinition& flow, StepDefinition step,
                                                  StepHandler handler);
std::shared_ptr<const FlowDefinition> new_flow(std::string_view slug, const FlowOptions& options);
void apply_step_arg(StepDefinition& step, IfPattern&& arg);
void apply_step_arg(StepDefinition& step, IfNotPattern&& arg);
void apply_step_arg(StepDefinition& step, const StepOptions& options);
inline void apply_step_arg(StepDefinition& step, const IfPattern& arg) {
  apply_step_arg(step, IfPattern(arg));
}
inline void apply_step_arg(StepDefinition& step, const IfNotPattern& arg) {
  apply_step_arg(step, IfNotPattern(arg));
}
void apply_step_arg(StepDefinition& step, const SleepForArg& arg);
void apply_step_arg(StepDefinition& step, const SleepUntilArg& arg);
inline void apply_step_arg(StepDefinition&, const auto& /*type-level argument or the handler*/) {}

// A wait step's arguments: a timeout's value is stored as the step's output type `Output`, what
// its dependents read (checked to convert without narrowing: timeout_output_fits).
template <typename Output, typename A>
void apply_wait_arg(StepDefinition& step, A&& arg) {
  if constexpr (is_signal_timeout_v<std::remove_cvref_t<A>>) {
    step.wait->timeout = arg.timeout;
    if constexpr (!std::is_void_v<typename ArgKind<std::remove_cvref_t<A>>::output>) {
      step.wait->timeout_output = nlohmann::json(timeout_value<Output>(arg.output));
    }
  } else {
    apply_step_arg(step, std::forward<A>(arg));
  }
}

// The last of its arguments (a step's handler), without building a tuple: a comma fold over
// ArgPointer, whose own operator, keeps the right-hand side.
template <typename T>
struct ArgPointer {
  std::remove_reference_t<T>* pointer;
};
template <typename T, typename U>
ArgPointer<U> operator,(ArgPointer<T>, ArgPointer<U> right) {
  return right;
}
template <typename... A>
decltype(auto) last_arg(A&&... a) {
  using Last = std::tuple_element_t<sizeof...(A) - 1, std::tuple<A...>>;
  return static_cast<Last&&>(*(ArgPointer<A>{std::addressof(a)}, ...).pointer);
}

// How a step's handler gets its arguments (see handler.h).
template <StepKind Kind, typename Input, typename Deps, typename... Steps>
struct ReaderOf;
template <StepKind Kind, typename Input, typename... Steps>
requires(Kind != StepKind::kMap) struct ReaderOf<Kind, Input, SlugList<>, Steps...> {
  using type = RootInputReader<Input>;
};
template <StepKind Kind, typename Input, FixedString... Ds, typename... Steps>
requires(Kind != StepKind::kMap &&
         sizeof...(Ds) > 0) struct ReaderOf<Kind, Input, SlugList<Ds...>, Steps...> {
  using type = DepsReader<DepSpec<Ds, typename StepNamed<Ds, Steps...>::output_type,
                                  StepNamed<Ds, Steps...>::skip.arrives_optional>...>;
};
template <typename Input, typename... Steps>
struct ReaderOf<StepKind::kMap, Input, SlugList<>, Steps...> {
  using type = ElementReader<typename ElementOf<Input>::type>;
};
template <typename Input, FixedString D, typename... Steps>
struct ReaderOf<StepKind::kMap, Input, SlugList<D>, Steps...> {
  using type =
      ElementReader<typename ElementOf<typename StepNamed<D, Steps...>::output_type>::type>;
};

// The array a map step iterates: the flow input (root map) or its source step's output.
template <typename Input, typename Deps, typename... Steps>
struct MapSource {
  using type = Input;
};
template <typename Input, FixedString D, typename... Steps>
struct MapSource<Input, SlugList<D>, Steps...> {
  using type = typename StepNamed<D, Steps...>::output_type;
};

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_BUILDER_H_
