// expect-success
// The DeployedFlow API compiles where it should: a plain or step-queued flow deployed under a
// literal or run-time alias keeps its types; workers start it (selecting a step of a
// step-queued one) and clients start its alias or pin its version.
#include <string>
#include <type_traits>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/deployed_flow.h"
#include "pgflow/worker.h"

const auto flow = pgflow::Flow<"greetUserV2", int>()
                      .array<"fetch">([](int x) { return std::vector<int>{x}; })
                      .map<"each">(pgflow::over<"fetch">, [](int x) { return std::to_string(x); });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = "greetUser"});
const auto routed =
    pgflow::define_deployed_flow(pgflow::with_step_queues(flow), {.alias = "greetUser"});

static_assert(
    std::is_same_v<pgflow::StepOutput<decltype(routed), "each">, std::vector<std::string>>);
static_assert(
    std::is_same_v<pgflow::FlowOutput<decltype(deployed)>, pgflow::FlowOutput<decltype(flow)>>);

int main() {
  std::string alias = "greetUser";
  auto configured = pgflow::define_deployed_flow(flow, {.alias = pgflow::runtime(alias)});
  auto one = pgflow::EdgeWorker::start(routed, pgflow::only_step<"each">, {.max_concurrent = 2});
  auto other = pgflow::EdgeWorker::start(configured);
  auto client = pgflow::Client::connect();
  if (client.ok()) {
    (void)client->start_flow(deployed, 1);
    (void)client->start_flow_by_slug(routed, 2);
  }
  return one.ok() && other.ok() ? 0 : 1;
}
