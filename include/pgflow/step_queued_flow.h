// File: pgflow/step_queued_flow.h
//
// pgflow::StepQueuedFlow: a flow whose every step has its own private queue and its own
// workers, so a huge map step, a slow step, or a step whose workers crashed cannot starve the
// rest of the flow (upstream pgflow's withStepQueues).
//
//   inline const auto orders = pgflow::with_step_queues(
//       pgflow::Flow<"orders", Order>()
//           .step<"validate">(...)
//           .map<"ship">(pgflow::over<"validate">, ...));
//
//   // One worker (pool) per step, in one process or in several:
//   auto validate = pgflow::EdgeWorker::start(orders, pgflow::only_step<"validate">, config);
//   auto ship = pgflow::EdgeWorker::start(orders, pgflow::only_step<"ship">, config);
//
// The wrapper keeps the exact flow type: handlers, dependencies, conditions, skip modes and
// FlowInput / FlowOutput / StepOutput are those of the wrapped flow, and shape_of() is the
// same shape (the queue mode is deployment metadata beside it). Each step's queue is
// lower(flow_slug + "__" + step_slug), or lower(flow_slug + "__" + step_index) when that is
// longer than PGMQ's 47 characters (pgflow::routes_of). Compile errors, each starting with
// `pgflow:`: a flow without steps, a flow whose step queue names cannot fit, a flow that is
// already step-queued or deployed. Tasks of a step without a running worker wait durably in
// its queue. See docs/flows.md and docs/worker.md.
#ifndef PGFLOW_STEP_QUEUED_FLOW_H_
#define PGFLOW_STEP_QUEUED_FLOW_H_

#include <cstddef>
#include <type_traits>
#include <utility>

#include "pgflow/detail/slug.h"
#include "pgflow/detail/wrapped_flow.h"
#include "pgflow/flow.h"

namespace pgflow {

namespace detail {
struct MakeStepQueued;
}  // namespace detail

// pgflow::StepQueuedFlow<F>
//
// F, a pgflow::Flow, with one queue per step. Made by with_step_queues(); spell the type with
// `auto` or decltype.
template <typename F>
class StepQueuedFlow : public detail::WrappedFlow<F> {
 public:
  using flow_type = F;
  static constexpr QueueMode queue_mode = QueueMode::kStep;

  // The wrapped flow, exactly as it was given.
  const F& flow() const { return this->wrapped_; }

 private:
  friend struct detail::MakeStepQueued;
  explicit StepQueuedFlow(const F& flow)
      : detail::WrappedFlow<F>(flow, detail::with_queue_mode(flow.definition(), QueueMode::kStep)) {
  }
};

namespace detail {

template <typename F>
struct IsStepQueuedFlow : std::false_type {};
template <typename F>
struct IsStepQueuedFlow<StepQueuedFlow<F>> : std::true_type {};

struct MakeStepQueued {
  template <typename F>
  static StepQueuedFlow<F> make(const F& flow) {
    return StepQueuedFlow<F>(flow);
  }
};

template <typename F>
constexpr bool step_queue_names_fit() {
  for (std::size_t i = 0; i < F::step_count; ++i) {
    if (step_queue_naming(F::slug(), F::step_slugs[i], i) == StepQueueNaming::kTooLong)
      return false;
  }
  return true;
}

}  // namespace detail

// Gives every step of `flow` its own private queue (see the file comment).
template <typename F>
auto with_step_queues(const F& flow) {
  constexpr bool is_flow = detail::IsFlow<F>::value || std::is_same_v<F, detail::InvalidFlow>;
  static_assert(is_flow,
                "pgflow: with_step_queues takes a pgflow::Flow; a StepQueuedFlow already has step "
                "queues, and a DeployedFlow is made from the step-queued flow "
                "(define_deployed_flow(with_step_queues(flow), ...))");
  if constexpr (!detail::IsFlow<F>::value) {
    return flow;  // an error was reported already (here or where the flow was built)
  } else {
    static_assert(F::step_count > 0,
                  "pgflow: with_step_queues needs a flow with at least one step; an empty flow has "
                  "no step to give a queue");
    static_assert(
        detail::step_queue_names_fit<F>(),
        "pgflow: with_step_queues: a step's private queue name, flow_slug__step_slug or "
        "flow_slug__step_index, is longer than PGMQ's 47 characters; shorten the flow slug");
    return detail::MakeStepQueued::make(flow);
  }
}

}  // namespace pgflow

#endif  // PGFLOW_STEP_QUEUED_FLOW_H_
