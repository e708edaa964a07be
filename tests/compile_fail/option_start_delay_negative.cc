// expect: pgflow: start_delay cannot be negative
// start_delay >= 0.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"options", int>()
                      .step<"a">([](int x) { return x; })
                      .step<"b">(pgflow::after<"a">, {.start_delay = -1}, [](int x) { return x; });
