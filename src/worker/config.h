// WorkerConfig checked against its flow, before anything touches the database, with its
// defaults filled in (the connection string from DATABASE_URL, the function name, the log sink).
#ifndef PGFLOW_WORKER_CONFIG_H_
#define PGFLOW_WORKER_CONFIG_H_

#include "absl/status/status.h"
#include "pgflow/flow_definition.h"
#include "pgflow/worker.h"
#include "worker/store_connections.h"

namespace pgflow::internal {

// kInvalidArgument listing every problem ("invalid WorkerConfig: ...").
absl::Status complete_and_check(WorkerConfig& config, const FlowDefinition& flow);

// Where the worker's stores connect, from its configuration.
StoreConnections store_connections(const WorkerConfig& config);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_CONFIG_H_
