// expect: pgflow: timeout must be at least 3 seconds
// timeout >= 3, as upstream's DSL.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"options", int>().step<"a">({.timeout = 2}, [](int x) { return x; });
