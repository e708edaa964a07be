// One task's handler call: its Context, the call, exception capture, its metrics and logs, and
// what to report. No threads and no SQL: the poller hands it tasks on handler threads, the
// reporter sends what it returns.
#ifndef PGFLOW_WORKER_TASK_RUNNER_H_
#define PGFLOW_WORKER_TASK_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "nlohmann/json.hpp"
#include "pgflow/flow_definition.h"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "worker/clock.h"
#include "worker/flow_input_cache.h"
#include "worker/in_flight.h"
#include "worker/store.h"

namespace pgflow::internal {

// A task the claim handed to this worker, registered in InFlight.
struct ClaimedTask {
  const StepDefinition* step = nullptr;  // nullptr: a step this worker has no handler for
  std::uint64_t id = 0;                  // in InFlight
  std::stop_token stop = {};
  std::string run_id = {};
  int task_index = 0;
  int attempt = 1;
  std::string claim_id = {};
  std::string message_id = {};  // decimal text
  nlohmann::json input = {};
  std::string input_problem = {};  // set: fails the task, permanently, without the handler
  std::optional<nlohmann::json> flow_input = {};
  int timeout_seconds = 60;
  Clock::WallTime deadline = {};  // Context::deadline(): claim time + the step's timeout
};

using MetricSink =
    std::function<void(WorkerMetric::Kind kind, std::string_view step, double value)>;

class TaskRunner {
 public:
  TaskRunner(const FlowDefinition& flow, InFlight& in_flight, FlowInputCache& inputs,
             const Clock& clock, const Logger& log, MetricSink metric);

  // Runs the task's handler (on the calling thread) and tells InFlight it returned. The result
  // to report, or nullopt when the database no longer wants the task (the result is dropped).
  // A handler that fails after its deadline fired fails the attempt as a deadline exceeded; one
  // that still produces its output completes the task.
  std::optional<TaskResult> run(const ClaimedTask& task);

 private:
  const FlowDefinition& flow_;
  InFlight& in_flight_;
  FlowInputCache& inputs_;
  const Clock& clock_;
  const Logger& log_;
  MetricSink metric_;
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_TASK_RUNNER_H_
