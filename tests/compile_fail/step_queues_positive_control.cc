// expect-success
// The step-queue API compiles where it should: wrapping a flow keeps its types, and a worker
// selects one of its steps with only_step, or at run time with config.step.
#include <string>
#include <type_traits>
#include <vector>

#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"

const auto plain = pgflow::Flow<"routed", int>()
                       .array<"fetch">([](int x) { return std::vector<int>{x}; })
                       .map<"each">(pgflow::over<"fetch">, [](int x) { return std::to_string(x); });
const auto routed = pgflow::with_step_queues(plain);

static_assert(
    std::is_same_v<pgflow::StepOutput<decltype(routed), "each">, std::vector<std::string>>);
static_assert(
    std::is_same_v<pgflow::FlowOutput<decltype(routed)>, pgflow::FlowOutput<decltype(plain)>>);

int main() {
  auto one = pgflow::EdgeWorker::start(routed, pgflow::only_step<"each">, {.max_concurrent = 2});
  auto other = pgflow::EdgeWorker::start(routed, {.step = "fetch"});
  return one.ok() && other.ok() ? 0 : 1;
}
