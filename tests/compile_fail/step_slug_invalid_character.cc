// expect: pgflow: a step slug can contain only ASCII letters, digits and single underscores
// Only ASCII letters, digits and underscores.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"fetch-user">([](int x) { return x; });
