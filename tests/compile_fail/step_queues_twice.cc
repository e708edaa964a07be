// expect: pgflow: with_step_queues takes a pgflow::Flow; a StepQueuedFlow already has step queues
// Wrapping a step-queued flow again is a mistake, not a no-op.
#include "pgflow/step_queued_flow.h"

const auto routed =
    pgflow::with_step_queues(pgflow::Flow<"twice", int>().step<"a">([](int x) { return x; }));
const auto again = pgflow::with_step_queues(routed);
