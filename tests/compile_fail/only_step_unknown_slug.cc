// expect: pgflow: only_step<"...">: the flow has no step with this slug
// A typo in the step a worker serves is caught at compile time.
#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"

const auto routed =
    pgflow::with_step_queues(pgflow::Flow<"routed", int>().step<"fetch">([](int x) { return x; }));

int main() { return pgflow::EdgeWorker::start(routed, pgflow::only_step<"fetchh">).ok() ? 0 : 1; }
