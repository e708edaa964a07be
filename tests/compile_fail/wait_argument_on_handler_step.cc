// expect: pgflow: signal_timeout, sleep_for and sleep_until belong to wait steps
// A step with a handler does not wait.
#include <chrono>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().step<"a">(
    pgflow::signal_timeout(std::chrono::hours(1)), [](int x) { return x; });
