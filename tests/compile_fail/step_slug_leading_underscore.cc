// expect: pgflow: a step slug must start with a letter, not '_'
// Slugs start with a letter, not an underscore.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"_fetch">([](int x) { return x; });
