// expect: pgflow: over<...> is only for .map\(\) steps
// over<> belongs to .map().
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"maps", int>()
        .step<"items">([](int x) { return std::vector<int>(x); })
        .step<"all">(pgflow::over<"items">, [](const std::vector<int>& x) { return x; });
