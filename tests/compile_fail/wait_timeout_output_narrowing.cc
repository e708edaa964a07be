// expect: pgflow: the value of pgflow::signal_timeout\(timeout, value\) must convert to the step.s output type without narrowing
// context: SignalTimeoutArg<int>
// A timed-out wait's value is stored as the step's output type: 0 is no bool (it would be stored
// as the number 0, which the step's dependents, reading a bool, refuse).
#include <chrono>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().signal<"approve", bool>(
    pgflow::signal_timeout(std::chrono::hours(1), 0));
