// expect: pgflow: max_attempts must be at least 1
// Literal option values are checked at compile time.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"options", int>().step<"a">({.max_attempts = 0}, [](int x) { return x; });
