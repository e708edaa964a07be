// expect: pgflow: a step slug cannot contain '__'
// '__' is reserved for generated queue names.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"fetch__user">([](int x) { return x; });
