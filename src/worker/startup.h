// The worker's startup protocol, in order: the handshake (an older or newer schema, and
// transactions outside READ COMMITTED, are refused with a clear message), deployment (compile
// or verify the flow, its queue mode and route, and activate an alias without an active
// version; a mismatch stops startup with the differences listed), registration; then one
// banner line. Each step is safe to repeat, so the worker retries the whole of it while the
// database is unreachable.
#ifndef PGFLOW_WORKER_STARTUP_H_
#define PGFLOW_WORKER_STARTUP_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "pgflow/flow_definition.h"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "worker/store.h"

namespace pgflow::internal {

// The worker protocol this library speaks (pgflow.worker_protocol() in the database).
inline constexpr int kWorkerProtocol = 6;

struct WorkerIdentity {
  std::string worker_id = {};
  std::string queue = {};  // the queue it polls: its step's, or the flow's
};

// The worker's row in pgflow.workers.
Registration registration_of(const FlowDefinition& flow, const WorkerConfig& config,
                             const WorkerIdentity& self);

// One attempt (`attempt` counts from 1; a later one tolerates its own registration from an
// earlier attempt whose reply was lost).
absl::Status deploy_and_register(Store& store, const FlowDefinition& flow,
                                 const std::vector<StepRoute>& routes, const WorkerConfig& config,
                                 const WorkerIdentity& self, const Logger& log, int attempt);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_STARTUP_H_
