// expect: pgflow: a flow alias cannot be empty
// An alias literal follows the shared slug rules, checked at compile time.
#include "pgflow/deployed_flow.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = ""});
