// expect: pgflow: after<...> names a step that this flow does not define before this one
// Dependencies must be declared earlier (a typo here).
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"deps", int>()
                      .step<"fetch">([](int x) { return x; })
                      .step<"parse">(pgflow::after<"fetchh">, [](int x) { return x; });
