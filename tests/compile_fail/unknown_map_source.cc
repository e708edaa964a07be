// expect: pgflow: over<...> names a step that this flow does not define before this one
// A map's source must be an earlier step.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"maps", int>().map<"each">(pgflow::over<"items">, [](int x) { return x; });
