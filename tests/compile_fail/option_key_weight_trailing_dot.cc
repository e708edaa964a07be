// expect: pgflow: a concurrency_key path is dotted field names of the run input
// context: char\*\)"plan\."
// A weight path is checked like the key's path.
#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"options", int>(
        {.concurrency_limit = 5, .concurrency_key = {.path = "tenant", .weight = "plan."}})
        .step<"a">([](int x) { return x; });
