// expect: pgflow: the handler takes a value as another type than the step gives it
// context: nlohmann::json_abi[a-z0-9_]*::basic_json<>
// The flow input is nlohmann::json; a handler taking an int would get it through nlohmann's
// lenient implicit conversion (2.5 to 2), not pgflow's exact one.
#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"raw", nlohmann::json>().step<"count">([](int n) { return n + 1; });
