// expect: pgflow: the handler must be callable as const
// Handlers run concurrently, so they cannot mutate their own state.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"handlers", int>().step<"count">([n = 0](int x) mutable { return x + ++n; });
