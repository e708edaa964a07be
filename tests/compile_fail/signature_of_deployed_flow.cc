// expect: pgflow: a signature names a plain flow or its step-queued form; a DeployedFlow's alias is known only at run time
// The alias of a deployed flow is a run-time value: a signature cannot be checked against it.
#include "pgflow/deployed_flow.h"
#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"

using Signature = pgflow::FlowSignature<"greetUser", int, pgflow::Leaf<"greet", int>>;
const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed =
    pgflow::implements<Signature>(pgflow::define_deployed_flow(flow, {.alias = "greetUser"}));
