// expect: pgflow: timeout must be at least 3 seconds
// context: chrono_literals
// A duration literal is range-checked like an int.
#include <chrono>

#include "pgflow/flow.h"

using namespace std::chrono_literals;

const auto flow =
    pgflow::Flow<"options", int>().step<"a">({.timeout = 2s}, [](int x) { return x; });
