// expect: pgflow: a step slug must start with a letter, not a digit
// Slugs start with a letter.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"2fetch">([](int x) { return x; });
