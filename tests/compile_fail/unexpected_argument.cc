// expect: pgflow: unexpected step argument
// Only the documented argument kinds are accepted before the handler.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"args", int>().step<"a">(42, [](int x) { return x; });
