// expect: pgflow: \.signal/\.signal_each wait for a signal
// A wait for a signal does not sleep.
#include <chrono>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"waits", int>().signal<"approve", int>(pgflow::sleep_for(std::chrono::seconds(5)));
