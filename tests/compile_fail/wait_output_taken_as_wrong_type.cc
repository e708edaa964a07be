// expect: pgflow: the handler cannot be called with this step.s input
// A dependent receives the wait's payload type, like any step output.
#include <string>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"waits", int>().signal<"approve", int>().step<"use">(
    pgflow::after<"approve">, [](const std::string& s) { return s; });
