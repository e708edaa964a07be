// expect: pgflow: with_step_queues: a step's private queue name, flow_slug__step_slug or flow_slug__step_index, is longer than PGMQ's 47 characters
// A 45-character flow slug leaves no room for "__0" (48 characters), let alone a step slug.
#include "pgflow/step_queued_flow.h"

const auto routed = pgflow::with_step_queues(
    pgflow::Flow<"ccccccccccccccccccccccccccccccccccccccccccccc", int>().step<"x">(
        [](int x) { return x; }));
