// expect: pgflow: concurrency_limit must be at least 1
// context: CheckedOption<pgflow::detail::ConcurrencyLimitRule>\(0\)
// concurrency_limit >= 1 (unset: no limit).
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"options", int>()
        .step<"a">([](int x) { return x; })
        .step<"b">(pgflow::after<"a">, {.concurrency_limit = 0}, [](int x) { return x; });
