// expect: pgflow: with_step_queues needs a flow with at least one step
// An empty flow has no step to give a queue.
#include "pgflow/step_queued_flow.h"

const auto routed = pgflow::with_step_queues(pgflow::Flow<"empty", int>());
