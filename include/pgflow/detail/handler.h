// File: pgflow/detail/handler.h
//
// NOT API: template machinery of the typed flow DSL (see pgflow/flow.h).
//
// Turns a typed handler into a pgflow::StepHandler over JSON: readers convert the claim's
// `input` (and the run input) into the handler's typed arguments, the call's result is
// unwrapped (void, absl::Status, absl::StatusOr<T>, T) and converted back to JSON. Every
// failure becomes an absl::Status; no exception leaves the wrapper.
#ifndef PGFLOW_DETAIL_HANDLER_H_
#define PGFLOW_DETAIL_HANDLER_H_

#include <cstddef>
#include <exception>
#include <functional>
#include <limits>
#include <memory>
#include <optional>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "pgflow/detail/exact_json.h"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/detail/step.h"

namespace pgflow::detail {

// ---- status builders (non-template, src/flow/handler.cc) ------------------------------
// Each is marked permanent (pgflow::permanent): a conversion fails the same way on every retry.

// kInvalidArgument: `flow "f", step "s": the input has no output of dependency "d"`.
absl::Status missing_dependency_error(std::string_view flow, std::string_view step,
                                      std::string_view dependency);
// kInvalidArgument: `flow "f", step "s": cannot convert the output of dependency "d": …`.
absl::Status dependency_conversion_error(std::string_view flow, std::string_view step,
                                         std::string_view dependency, std::string_view reason);
// kInvalidArgument: the input of a dependent step is not a JSON object.
absl::Status input_not_object_error(std::string_view flow, std::string_view step,
                                    std::string_view json_type);
// kInvalidArgument: a map element does not convert to the handler's parameter type.
absl::Status element_conversion_error(std::string_view flow, std::string_view step, int task_index,
                                      std::string_view reason);
// kInvalidArgument: the handler's result does not convert to JSON.
absl::Status output_conversion_error(std::string_view flow, std::string_view step,
                                     std::string_view reason);
// kInvalidArgument (output_conversion_error) when `output` cannot be stored as jsonb: NaN or an
// infinity, a string or key with a NUL character or invalid UTF-8, nesting deeper than 1000
// levels (docs/errors.md, "Hostile input"); OK otherwise. Never recurses.
absl::Status check_output(std::string_view flow, std::string_view step,
                          const nlohmann::json& output);

// Thrown by readers and by to_output; caught by the StepHandler that to_step_handler builds.
struct InputError {
  absl::Status status;
};
struct OutputError {
  absl::Status status;
};

// The flow and step a handler belongs to, for error messages. The views point into the
// FixedString template arguments, which live for the whole program. Passed at run time (not
// as template arguments) so that steps with the same types share the conversion code.
struct StepNames {
  std::string_view flow;
  std::string_view step;
};

// ---- readers: claim input -> typed handler arguments -----------------------------------------

// A root single step: the run input (Context::flow_input), as Input.
template <typename Input>
struct RootInputReader {
  using args = TypeList<Input>;
  static std::tuple<Input> read(const StepNames& names, const nlohmann::json& /*input*/,
                                Context& ctx) {
    absl::StatusOr<nlohmann::json> run_input = ctx.flow_input();
    if (!run_input.ok()) throw InputError{run_input.status()};
    try {
      return std::tuple<Input>{exact_get<Input>(*run_input)};
    } catch (const std::exception& e) {
      throw InputError{flow_input_conversion_error(names.flow, names.step, e.what())};
    }
  }
};

// A map step: the one element of the source array this task processes.
template <typename Element>
struct ElementReader {
  using args = TypeList<Element>;
  static std::tuple<Element> read(const StepNames& names, const nlohmann::json& input,
                                  Context& ctx) {
    try {
      return std::tuple<Element>{exact_get<Element>(input)};
    } catch (const std::exception& e) {
      throw InputError{
          element_conversion_error(names.flow, names.step, ctx.task_index(), e.what())};
    }
  }
};

// One dependency of a dependent single step. Optional: skipped with mode `skip`, so its key
// may be absent from the input; it arrives as std::optional<Output>.
template <FixedString Slug, typename Output, bool Optional>
struct DepSpec {
  static constexpr FixedString slug = Slug;
  static constexpr bool optional = Optional;
  using output = Output;
  using arg = std::conditional_t<Optional, std::optional<Output>, Output>;
};

// Shared by every dependency of the same type (the slug is a run-time value).
template <typename Output, bool Optional>
std::conditional_t<Optional, std::optional<Output>, Output> read_dependency(
    const StepNames& names, std::string_view slug, const nlohmann::json& input) {
  const auto it = input.find(slug);
  if (it == input.end()) {
    if constexpr (Optional) {
      return std::nullopt;
    } else {
      throw InputError{missing_dependency_error(names.flow, names.step, slug)};
    }
  }
  try {
    return exact_get<Output>(*it);
  } catch (const std::exception& e) {
    throw InputError{dependency_conversion_error(names.flow, names.step, slug, e.what())};
  }
}

// A dependent single step: `{dep_slug: output}` of its completed dependencies.
template <typename... Specs>
struct DepsReader {
  using args = TypeList<typename Specs::arg...>;
  static std::tuple<typename Specs::arg...> read(const StepNames& names,
                                                 const nlohmann::json& input, Context& /*ctx*/) {
    if (!input.is_object())
      throw InputError{input_not_object_error(names.flow, names.step, input.type_name())};
    // Braced initialisation: dependencies are read (and errors reported) in after<...> order.
    return std::tuple<typename Specs::arg...>{
        read_dependency<typename Specs::output, Specs::optional>(names, Specs::slug.view(),
                                                                 input)...};
  }
};

// ---- handler shape -------------------------------------------------------------------------

template <typename H, typename ArgList>
struct HandlerCall;
template <typename H, typename... Args>
struct HandlerCall<H, TypeList<Args...>> {
  static constexpr bool with_context = std::is_invocable_v<const H&, Args..., Context&>;
  static constexpr bool without_context = std::is_invocable_v<const H&, Args...>;
  static constexpr bool callable = with_context || without_context;
  static constexpr bool callable_if_mutable =
      std::is_invocable_v<H&, Args..., Context&> || std::is_invocable_v<H&, Args...>;

  // The call's result type; only instantiate when `callable` (a member template, so that
  // merely naming HandlerCall never fails).
  template <bool WithContext = with_context, typename = void>
  struct Result {
    using type = std::invoke_result_t<const H&, Args...>;
  };
  template <typename Dummy>
  struct Result<true, Dummy> {
    using type = std::invoke_result_t<const H&, Args..., Context&>;
  };
};

// The same argument list with every std::optional<T> replaced by T: if the handler accepts
// that one, it took a skip-mode dependency as T instead of std::optional<T>.
template <typename T>
struct StripOptional {
  using type = T;
};
template <typename T>
struct StripOptional<std::optional<T>> {
  using type = T;
};
template <typename ArgList>
struct StripOptionals;
template <typename... Args>
struct StripOptionals<TypeList<Args...>> {
  using type = TypeList<typename StripOptional<Args>::type...>;
};

// Parameter types of a handler when they can be read off its type (function pointers and
// classes with one non-template operator(), such as non-generic lambdas).
template <typename F>
struct Params {
  static constexpr bool known = false;
};
template <typename R, typename... P>
struct Params<R (*)(P...)> {
  static constexpr bool known = true;
  using list = TypeList<P...>;
};
template <typename R, typename... P>
struct Params<R (*)(P...) noexcept> : Params<R (*)(P...)> {};
template <typename R, typename C, typename... P>
struct Params<R (C::*)(P...) const> : Params<R (*)(P...)> {};
template <typename R, typename C, typename... P>
struct Params<R (C::*)(P...) const noexcept> : Params<R (*)(P...)> {};
template <typename R, typename C, typename... P>
struct Params<R (C::*)(P...)> : Params<R (*)(P...)> {};
template <typename R, typename C, typename... P>
struct Params<R (C::*)(P...) noexcept> : Params<R (*)(P...)> {};
template <typename F>
requires requires { &F::operator(); }
struct Params<F> : Params<decltype(&F::operator())> {};

template <typename P, typename Arg>
constexpr bool optional_param_for_value_arg =
    is_optional<std::remove_cvref_t<P>>::value && !is_optional<Arg>::value &&
    std::is_same_v<std::remove_cvref_t<P>, std::optional<Arg>>;

template <typename ParamList, typename ArgList>
struct TakesOptionalForValue {
  static constexpr bool value = false;
};
template <typename... P, typename... A>
requires(sizeof...(P) >=
         sizeof...(A)) struct TakesOptionalForValue<TypeList<P...>, TypeList<A...>> {
  template <std::size_t... I>
  static constexpr bool check(std::index_sequence<I...>) {
    return (optional_param_for_value_arg<std::tuple_element_t<I, std::tuple<P...>>, A> || ...);
  }
  static constexpr bool value = check(std::index_sequence_for<A...>{});
};

// True when H visibly declares std::optional<T> for an argument that always holds a T.
template <typename H, typename ArgList>
constexpr bool takes_optional_for_value() {
  if constexpr (Params<H>::known) {
    return TakesOptionalForValue<typename Params<H>::list, ArgList>::value;
  } else {
    return false;
  }
}

// True when every value of arithmetic type From is one of To: a bool only as a bool; integers
// into integers of enough digits that take every sign of From; integers and floating values
// into floating types of enough digits (and range). So int to long or double, and float to
// double, change nothing; -1 to unsigned, 2.5 to int, or a long to a double (2^53 + 1) could.
template <typename From, typename To>
constexpr bool holds_every_value_of() {
  using F = std::numeric_limits<From>;
  using T = std::numeric_limits<To>;
  if constexpr (std::is_same_v<From, To>) {
    return true;
  } else if constexpr (std::is_same_v<From, bool> || std::is_same_v<To, bool>) {
    return false;
  } else if constexpr (F::is_integer) {
    return T::digits >= F::digits && (T::is_signed || !F::is_signed);
  } else {
    return !T::is_integer && T::digits >= F::digits && T::max_exponent >= F::max_exponent;
  }
}

// True when passing an argument of type Arg (what pgflow read, exactly, for the handler: the
// flow input, a dependency's output, an element) to a parameter of type P could change it behind
// the exact reader's back (pgflow/detail/exact_json.h): a number or bool into an arithmetic type
// that cannot hold all its values (2.5 to 2, -1 to 4294967295), or nlohmann::json into anything
// else (its implicit conversions are lenient, and their errors would not name the step). Other
// conversions (int to long, std::string to std::string_view, a vector to a span) change no value.
template <typename P, typename Arg>
constexpr bool param_changes_value() {
  using Param = typename StripOptional<std::remove_cvref_t<P>>::type;
  using Given = typename StripOptional<Arg>::type;
  if constexpr (std::is_same_v<Param, Given>) {
    return false;
  } else if constexpr (std::is_same_v<Given, nlohmann::json>) {
    return true;
  } else if constexpr (std::is_arithmetic_v<Param> && std::is_arithmetic_v<Given>) {
    return !holds_every_value_of<Given, Param>();
  } else {
    return false;
  }
}

template <typename ParamList, typename ArgList>
struct ParamsChangeValues {
  static constexpr bool value = false;
};
template <typename... P, typename... A>
requires(sizeof...(P) >= sizeof...(A)) struct ParamsChangeValues<TypeList<P...>, TypeList<A...>> {
  template <std::size_t... I>
  static constexpr bool check(std::index_sequence<I...>) {
    return (param_changes_value<std::tuple_element_t<I, std::tuple<P...>>, A>() || ...);
  }
  static constexpr bool value = check(std::index_sequence_for<A...>{});
};

// True when H visibly declares a parameter that would convert its argument (above). A generic
// handler (auto parameters) takes each argument as it is.
template <typename H, typename ArgList>
constexpr bool params_change_values() {
  if constexpr (Params<H>::known) {
    return ParamsChangeValues<typename Params<H>::list, ArgList>::value;
  } else {
    return false;
  }
}

// What a handler's return type means.
enum class ResultKind { kVoid, kStatus, kStatusOr, kValue };
template <typename R>
struct HandlerResult {
  static constexpr ResultKind kind = ResultKind::kValue;
  using value = std::remove_cvref_t<R>;
};
template <>
struct HandlerResult<void> {
  static constexpr ResultKind kind = ResultKind::kVoid;
  using value = std::nullptr_t;  // stored as JSON null
};
template <typename R>
requires std::is_same_v<std::remove_cvref_t<R>, absl::Status>
struct HandlerResult<R> {
  static constexpr ResultKind kind = ResultKind::kStatus;
  using value = std::nullptr_t;
};
template <typename R>
requires requires {
  typename std::remove_cvref_t<R>::value_type;
} && std::is_same_v<std::remove_cvref_t<R>,
                    absl::StatusOr<typename std::remove_cvref_t<R>::value_type>>
struct HandlerResult<R> {
  static constexpr ResultKind kind = ResultKind::kStatusOr;
  using value = typename std::remove_cvref_t<R>::value_type;
};

// ---- the erased handler --------------------------------------------------------------------

template <typename T>
nlohmann::json to_output(const StepNames& names, const T& value) {
  if constexpr (std::is_same_v<T, nlohmann::json>) {
    // Before the copy: nlohmann's copy (like its dump) recurses once per level.
    if (absl::Status s = check_output(names.flow, names.step, value); !s.ok())
      throw OutputError{std::move(s)};
  }
  nlohmann::json output;
  try {
    output = nlohmann::json(value);
  } catch (const std::exception& e) {
    throw OutputError{output_conversion_error(names.flow, names.step, e.what())};
  }
  if constexpr (!std::is_same_v<T, nlohmann::json>) {
    if (absl::Status s = check_output(names.flow, names.step, output); !s.ok())
      throw OutputError{std::move(s)};
  }
  return output;
}

// The non-template interface of a typed handler. to_step_handler (src/flow/handler.cc) wraps
// one into a StepHandler that shares it (copies are cheap, move-only handlers work) and turns
// every exception into a status: InputError and OutputError carry their own, a
// std::exception becomes kUnknown with its what(), anything else kUnknown.
class TypedHandlerBase {
 public:
  virtual ~TypedHandlerBase() = default;
  // May throw; see to_step_handler.
  virtual absl::StatusOr<nlohmann::json> run(const nlohmann::json& input, Context& ctx) const = 0;
};

StepHandler to_step_handler(std::unique_ptr<const TypedHandlerBase> handler);

// One step's handler: reads the arguments with Reader, calls H, converts the result. Kept
// free of exception handling and of slugs in its template arguments, so that each step
// instantiates little beyond its own handler call.
template <typename Reader, typename H>
class TypedHandler final : public TypedHandlerBase {
 public:
  TypedHandler(StepNames names, H handler) : names_(names), handler_(std::move(handler)) {}

  absl::StatusOr<nlohmann::json> run(const nlohmann::json& input, Context& ctx) const override {
    return std::apply([&](auto&&... a) { return call(ctx, std::move(a)...); },
                      Reader::read(names_, input, ctx));
  }

 private:
  template <typename... A>
  decltype(auto) invoke(Context& ctx, A&&... a) const {
    if constexpr (std::is_invocable_v<const H&, A..., Context&>) {
      return std::invoke(handler_, std::forward<A>(a)..., ctx);
    } else {
      return std::invoke(handler_, std::forward<A>(a)...);
    }
  }

  template <typename... A>
  absl::StatusOr<nlohmann::json> call(Context& ctx, A&&... a) const {
    using R = decltype(invoke(ctx, std::forward<A>(a)...));
    constexpr ResultKind kind = HandlerResult<R>::kind;
    if constexpr (kind == ResultKind::kVoid) {
      invoke(ctx, std::forward<A>(a)...);
      return nlohmann::json(nullptr);
    } else if constexpr (kind == ResultKind::kStatus) {
      absl::Status status = invoke(ctx, std::forward<A>(a)...);
      if (!status.ok()) return status;
      return nlohmann::json(nullptr);
    } else if constexpr (kind == ResultKind::kStatusOr) {
      auto result = invoke(ctx, std::forward<A>(a)...);
      if (!result.ok()) return std::move(result).status();
      return to_output(names_, *result);
    } else {
      decltype(auto) result = invoke(ctx, std::forward<A>(a)...);
      return to_output(names_, result);
    }
  }

  StepNames names_;
  H handler_;
};

template <typename Reader, typename H>
StepHandler make_step_handler(StepNames names, H&& handler) {
  return to_step_handler(std::unique_ptr<const TypedHandlerBase>(
      new TypedHandler<Reader, std::decay_t<H>>(names, std::forward<H>(handler))));
}

}  // namespace pgflow::detail

#endif  // PGFLOW_DETAIL_HANDLER_H_
