// expect: pgflow: a step slug cannot be empty
// A step slug must not be empty.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"">([](int x) { return x; });
