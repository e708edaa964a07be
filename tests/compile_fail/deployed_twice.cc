// expect: pgflow: define_deployed_flow takes a pgflow::Flow or a StepQueuedFlow; a DeployedFlow already has its alias
// A version belongs to one alias: deploying a deployed flow again is a mistake.
#include "pgflow/deployed_flow.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = "greetUser"});
const auto again = pgflow::define_deployed_flow(deployed, {.alias = "welcome"});
