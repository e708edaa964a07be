// expect: pgflow: .map\(\) iterates its source step's output, but that output type is not an array
// context: Source = int\]
// A map iterates an array; `count` returns an int.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"maps", int>()
                      .step<"count">([](int x) { return x; })
                      .map<"each">(pgflow::over<"count">, [](int x) { return x; });
