// expect: pgflow: concurrency_key.limit must be at least 1
// A key limit caps one key value: at least 1 (unset: no cap per key).
#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"options", int>(
                      {.concurrency_limit = 5, .concurrency_key = {.path = "tenant", .limit = 0}})
                      .step<"a">([](int x) { return x; });
