// expect: pgflow: when_unmet_\* needs a condition
// when_unmet only makes sense with when(...) or unless(...), as upstream.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"conditions", int>().step<"a">(pgflow::when_unmet_skip, [](int x) { return x; });
