// expect: pgflow: a .map\(\) step names its source array with pgflow::over<"slug">, not after<...>
// A map names its one source with over<>.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"maps", int>()
                      .step<"items">([](int x) { return std::vector<int>(x); })
                      .map<"each">(pgflow::after<"items">, [](int x) { return x; });
