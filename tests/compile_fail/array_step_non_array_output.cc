// expect: pgflow: an .array\(\) step must return an array
// .array() is for steps that return arrays.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"handlers", int>().array<"items">([](int x) { return x; });
