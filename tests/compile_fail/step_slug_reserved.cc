// expect: pgflow: 'run' is reserved and cannot be a step slug
// 'run' is a reserved word.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"slugs", int>().step<"run">([](int x) { return x; });
