// expect: pgflow: a step slug cannot end with '_'
// Slugs do not end with an underscore.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"fetch_">([](int x) { return x; });
