// expect: use of deleted function .*runtime
// pgflow::runtime(0.5) would truncate to 0: options are whole numbers.
#include "pgflow/flow.h"

const double configured = 0.5;
const auto flow = pgflow::Flow<"late", int>().step<"a">(
    {.start_delay = pgflow::runtime(configured)}, [](int x) { return x; });
