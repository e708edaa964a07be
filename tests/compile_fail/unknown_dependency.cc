// expect: pgflow: after<...> names a step that this flow does not define before this one
// context: Deps = SlugList<FixedString<6>{"fetchh"}>. Steps = {StepTag<FixedString<5>{"fetch"}
// Dependencies must be declared earlier (a typo here).
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"deps", int>()
                      .step<"fetch">([](int x) { return x; })
                      .step<"parse">(pgflow::after<"fetchh">, [](int x) { return x; });
