// expect: pgflow: a dependency in after<...> is skipped with mode skip
// when_exhausted_skip also makes a dependency optional.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"conditions", int>()
        .step<"flaky">(pgflow::when_exhausted_skip, [](int x) { return x; })
        .step<"report">(pgflow::after<"flaky">, [](const int& flaky) { return flaky; });
