// expect: pgflow: after<...> names a step that this flow does not define before this one
// context: Deps = SlugList<FixedString<5>{"fetch"}>. Steps = {}
// Steps can only depend on earlier steps (so cycles cannot be written).
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"deps", int>()
                      .step<"parse">(pgflow::after<"fetch">, [](int x) { return x; })
                      .step<"fetch">([](int x) { return x; });
