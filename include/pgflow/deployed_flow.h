// File: pgflow/deployed_flow.h
//
// pgflow::DeployedFlow: a flow version deployed under a stable alias. Callers start the alias
// ("greetUser"); the alias points to exactly one active concrete version ("greetUserV2"), which
// runs, tasks, queues and events carry. Deploying a new version never switches the alias by
// itself: an operator activates it, with a compare-and-swap, once its workers run.
//
//   inline const auto greet_v2 = pgflow::define_deployed_flow(
//       pgflow::Flow<"greetUserV2", Signup>().step<"greet">(greet), {.alias = "greetUser"});
//
//   pgflow::EdgeWorker::run(greet_v2);                      // compiles V2, joins "greetUser"
//   client.activate_flow_version("greetUser", "greetUserV2", "greetUserV1");
//   client.start_flow(greet_v2, Signup{"a@b.c"});           // the alias's active version
//
// A step-queued flow is deployed the same way (define_deployed_flow(with_step_queues(flow),
// ...)), and its workers select their step as usual (only_step<"slug">). The wrapper keeps the
// exact flow type: every inference, FlowInput / FlowOutput / StepOutput, step selection and
// shape_of work as on the wrapped flow. An alias literal follows the shared slug rules, checked
// at compile time; an alias known only at run time goes through pgflow::runtime(text)
// (pgflow/flow_options.h) and is checked by validate() (the worker's startup). A plain Flow is
// its own alias. See docs/deploying.md.
#ifndef PGFLOW_DEPLOYED_FLOW_H_
#define PGFLOW_DEPLOYED_FLOW_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>

#include "pgflow/detail/slug.h"
#include "pgflow/detail/wrapped_flow.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"

namespace pgflow {

namespace detail {

// Never defined and not constexpr: calling it while evaluating a consteval constructor makes
// an invalid alias literal a compile error whose line shows the explanation.
void pgflow_invalid_alias(const char* explanation);

consteval void check_alias(std::string_view alias) {
  switch (slug_problem(alias)) {
    case SlugProblem::kNone:
      return;
    case SlugProblem::kEmpty:
      pgflow_invalid_alias(
          "pgflow: a flow alias cannot be empty (a flow without define_deployed_flow is its own "
          "alias)");
    case SlugProblem::kTooLong:
      pgflow_invalid_alias("pgflow: a flow alias can be at most 128 characters long");
    case SlugProblem::kInvalidCharacter:
      pgflow_invalid_alias(
          "pgflow: a flow alias can contain only ASCII letters, digits and single underscores "
          "(camelCase works)");
    case SlugProblem::kLeadingDigit:
      pgflow_invalid_alias("pgflow: a flow alias must start with a letter, not a digit");
    case SlugProblem::kLeadingUnderscore:
      pgflow_invalid_alias("pgflow: a flow alias must start with a letter, not '_'");
    case SlugProblem::kTrailingUnderscore:
      pgflow_invalid_alias("pgflow: a flow alias cannot end with '_'");
    case SlugProblem::kDoubleUnderscore:
      pgflow_invalid_alias(
          "pgflow: a flow alias cannot contain '__'; use one underscore or camelCase");
    case SlugProblem::kReserved:
      pgflow_invalid_alias("pgflow: 'run' is reserved and cannot be a flow alias");
  }
}

template <typename T>
inline constexpr bool kAlwaysFalse = false;

}  // namespace detail

// pgflow::AliasName
//
// An alias: a string literal checked at compile time, or pgflow::runtime(text). (A literal is
// viewed, a run-time text owned: a consteval constructor cannot leave a std::string behind.
// Copies share the owned text; there is no move, so no copy is ever left viewing text it does
// not keep alive.)
class AliasName {
 public:
  template <std::size_t N>
  consteval AliasName(const char (&literal)[N]) : view_(literal, N - 1) {  // NOLINT: implicit
    detail::check_alias(view_);
  }
  AliasName(RuntimeText text)  // NOLINT: implicit
      : owned_(std::make_shared<const std::string>(std::move(text.value))), view_(*owned_) {}
  // Any other text: not checkable at compile time, so it must say so.
  template <typename T>
  requires(!std::is_array_v<T> && std::is_convertible_v<const T&, std::string_view>)
      AliasName(const T&) {  // NOLINT: implicit
    static_assert(detail::kAlwaysFalse<T>,
                  "pgflow: an alias that is not a string literal is known only at run time: write "
                  "{.alias = pgflow::runtime(text)}");
  }
  AliasName(const AliasName&) = default;
  AliasName& operator=(const AliasName&) = default;

  std::string_view value() const { return view_; }

 private:
  std::shared_ptr<const std::string> owned_;
  std::string_view view_;
};

// pgflow::DeployOptions
struct DeployOptions {
  // The stable alias callers start (see the file comment). Required.
  AliasName alias;
};

namespace detail {
struct MakeDeployed;
}  // namespace detail

// pgflow::DeployedFlow<F>
//
// F, a pgflow::Flow or a StepQueuedFlow, deployed under an alias. Made by
// define_deployed_flow(); spell the type with `auto` or decltype.
template <typename F>
class DeployedFlow : public detail::WrappedFlow<F> {
 public:
  using flow_type = F;
  static constexpr QueueMode queue_mode = F::queue_mode;

  // The wrapped flow, exactly as it was given.
  const F& flow() const { return this->wrapped_; }
  // The alias this version belongs to.
  const std::string& alias() const { return *this->definition_->alias; }

 private:
  friend struct detail::MakeDeployed;
  DeployedFlow(const F& flow, std::string alias)
      : detail::WrappedFlow<F>(flow, detail::with_alias(flow.definition(), std::move(alias))) {}
};

namespace detail {

struct MakeDeployed {
  template <typename F>
  static DeployedFlow<F> make(const F& flow, std::string alias) {
    return DeployedFlow<F>(flow, std::move(alias));
  }
};

}  // namespace detail

// Deploys `flow` (a pgflow::Flow or a StepQueuedFlow) under `options.alias`.
template <typename F>
auto define_deployed_flow(const F& flow, DeployOptions options) {
  constexpr bool deployable = detail::IsFlow<F>::value || detail::IsStepQueuedFlow<F>::value;
  static_assert(deployable || std::is_same_v<F, detail::InvalidFlow>,
                "pgflow: define_deployed_flow takes a pgflow::Flow or a StepQueuedFlow; a "
                "DeployedFlow already has its alias (a version belongs to one alias)");
  if constexpr (!deployable) {
    return flow;  // an error was reported already (here or where the flow was built)
  } else {
    return detail::MakeDeployed::make(flow, std::string(options.alias.value()));
  }
}

}  // namespace pgflow

#endif  // PGFLOW_DEPLOYED_FLOW_H_
