// expect: pgflow: the handler cannot be called with this step's input
// context: HandlerCall<<lambda\(int\)>, TypeList<int, int> >
// A dependent step takes one argument per dependency.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"handlers", int>()
                      .step<"a">([](int x) { return x; })
                      .step<"b">([](int x) { return x; })
                      .step<"sum">(pgflow::after<"a", "b">, [](int x) { return x; });
