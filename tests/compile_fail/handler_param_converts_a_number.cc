// expect: pgflow: the handler takes a value as another type than the step gives it
// context: unsigned int
// `delta` outputs an int; `refund` takes it as unsigned, which C++ would convert after pgflow's
// exact checks (-5 to 4294967291).
#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"pay", int>()
                      .step<"delta">([](int x) { return x - 10; })
                      .step<"refund">(pgflow::after<"delta">, [](unsigned c) { return c; });
