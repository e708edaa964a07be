// expect: pgflow: an alias that is not a string literal is known only at run time: write \{.alias = pgflow::runtime\(text\)\}
// A std::string cannot be checked at compile time: it must be marked as a run-time value.
#include <string>

#include "pgflow/deployed_flow.h"

const auto flow = pgflow::Flow<"greetUserV2", int>().step<"greet">([](int x) { return x; });
const std::string configured = "greetUser";
const auto deployed = pgflow::define_deployed_flow(flow, {.alias = configured});
