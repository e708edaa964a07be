// expect: pgflow: the value of pgflow::signal_timeout\(timeout, value\) must convert to the step.s output type without narrowing
// context: SignalTimeoutArg<nlohmann::json_abi[a-z0-9_]*::basic_json<std::map
// A nlohmann::json value for a typed output would go through nlohmann's lenient conversion (or,
// by braces, become the one element of a list): give the value as the step's type.
#include <chrono>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().signal<"approve", std::vector<int>>(
    pgflow::signal_timeout(std::chrono::hours(1), nlohmann::json::array()));
