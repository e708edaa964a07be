// expect: pgflow: concurrency_limit must be at least 1
// context: CheckedOption<pgflow::detail::ConcurrencyLimitRule>\(-3\)
// A flow's concurrency_limit >= 1 too.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"options", int>({.concurrency_limit = -3}).step<"a">([](int x) { return x; });
