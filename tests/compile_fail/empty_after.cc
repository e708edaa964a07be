// expect: pgflow: after<> needs at least one step slug
// after<> lists at least one dependency.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"deps", int>().step<"a">(pgflow::after<>, [](int x) { return x; });
