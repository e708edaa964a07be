// expect: pgflow: only_step<"..."> selects one step of a StepQueuedFlow, but this flow has one queue for all its steps
// context: F = pgflow::Flow<
// A plain flow's worker serves every step; there is no step to select.
#include "pgflow/flow.h"
#include "pgflow/worker.h"

const auto flow = pgflow::Flow<"plain", int>().step<"a">([](int x) { return x; });

int main() { return pgflow::EdgeWorker::start(flow, pgflow::only_step<"a">).ok() ? 0 : 1; }
