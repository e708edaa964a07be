// expect: pgflow: a flow alias cannot contain '__'; use one underscore or camelCase
// An alias literal follows the shared slug rules, checked at compile time.
#include "pgflow/deployed_flow.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = "greet__user"});
