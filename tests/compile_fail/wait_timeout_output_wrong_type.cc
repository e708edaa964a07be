// expect: pgflow: the value of pgflow::signal_timeout\(timeout, value\) must convert to the step.s output type without narrowing
// context: SignalTimeoutArg<std::
// A timed-out wait completes with a value of the step's output type.
#include <chrono>
#include <string>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().signal<"approve", int>(
    pgflow::signal_timeout(std::chrono::hours(1), std::string("no")));
