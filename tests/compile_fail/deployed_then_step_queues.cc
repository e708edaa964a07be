// expect: a DeployedFlow is made from the step-queued flow \(define_deployed_flow\(with_step_queues\(flow\), ...\)\)
// Step queues are part of the flow a DeployedFlow wraps: define_deployed_flow(with_step_queues(flow), ...).
#include "pgflow/deployed_flow.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = "greetUser"});
const auto routed = pgflow::with_step_queues(deployed);
