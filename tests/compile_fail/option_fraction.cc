// expect: pgflow: options are whole numbers
// `.start_delay = 0.5` would be truncated to 0.
#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"late", int>().step<"a">({.start_delay = 0.5}, [](int x) { return x; });
