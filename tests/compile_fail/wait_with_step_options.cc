// expect: pgflow: a wait step takes no step options
// A wait step has no handler, attempts or timeout of its own.
#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"waits", int>().signal<"approve", int>(pgflow::StepOptions{.max_attempts = 3});
