// expect: pgflow: a root .map\(\) step iterates the flow input, but the flow's input type is not an array
// A root map iterates the run input, which must be an array type.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"maps", int>().map<"each">([](int x) { return x; });
