// expect: pgflow: a step argument kind is repeated
// All dependencies go in one after<...>.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"deps", int>()
        .step<"a">([](int x) { return x; })
        .step<"b">([](int x) { return x; })
        .step<"c">(pgflow::after<"a">, pgflow::after<"b">, [](int x, int y) { return x + y; });
