// WorkerConfig checked against its flow, before anything touches the database, with its
// defaults filled in (the connection string from DATABASE_URL, the function name, the log sink).
#ifndef PGFLOW_WORKER_CONFIG_H_
#define PGFLOW_WORKER_CONFIG_H_

#include <chrono>

#include "absl/status/status.h"
#include "pgflow/flow_definition.h"
#include "pgflow/worker.h"
#include "worker/store_connections.h"

namespace pgflow::internal {

// kInvalidArgument listing every problem ("invalid WorkerConfig: ...").
absl::Status complete_and_check(WorkerConfig& config, const FlowDefinition& flow);

// The longest an idle worker waits between polls: poll_interval, or by default 1 s, and 2 s
// for a poll_only worker (a fleet's idle polls are a large part of its cost to the server).
std::chrono::milliseconds idle_poll_interval(const WorkerConfig& config);

// How often a poll_only worker asks which running tasks are still wanted (the bound on a
// cancellation reaching its handlers): poll_interval, or 1 s by default.
std::chrono::milliseconds stop_check_interval(const WorkerConfig& config);

// Where the worker's stores connect, from its configuration.
StoreConnections store_connections(const WorkerConfig& config);

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_CONFIG_H_
