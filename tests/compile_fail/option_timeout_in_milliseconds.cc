// expect: pgflow: time options are whole seconds
// Time options are whole seconds: a duration that does not convert to seconds without loss
// (milliseconds) is refused rather than rounded.
#include <chrono>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"options", int>().step<"a">(
    {.timeout = std::chrono::milliseconds(1500)}, [](int x) { return x; });
