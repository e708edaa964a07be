// expect: pgflow: only_step<"..."> selects one step of a StepQueuedFlow, but this flow has one queue for all its steps
// context: F = pgflow::DeployedFlow<
// A DeployedFlow of a plain flow keeps its one queue: a worker cannot select a step.
#include "pgflow/deployed_flow.h"
#include "pgflow/worker.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = "greetUser"});

int main() { return pgflow::EdgeWorker::start(deployed, pgflow::only_step<"greet">).ok() ? 0 : 1; }
