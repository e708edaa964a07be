// The soak's end checks, read directly from the server once the faults have stopped: every
// run the producer started must be completed with exactly the output its input implies, and
// the tasks in the database must agree with the execution log (every completed task ran at
// least once; no task ran more often than it was claimed).
#ifndef PGFLOW_TESTS_SOAK_VERIFY_H_
#define PGFLOW_TESTS_SOAK_VERIFY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "execution_log.h"
#include "producer.h"

namespace pgflow::soak {

struct Verification {
  std::int64_t runs = 0;          // runs the producer started (and abandoned starts that exist)
  std::int64_t completed_ok = 0;  // completed with the right output
  std::int64_t wrong_output = 0;  // completed with another output (or another input)
  std::int64_t failed = 0;
  std::int64_t unfinished = 0;        // still started when the drain ended
  std::int64_t missing = 0;           // started (acknowledged) but not in the database
  std::int64_t unknown = 0;           // soak runs in the database the producer never started
  std::vector<std::string> problems;  // the first lost runs, with their tasks

  // pgflow.step_tasks of the soak's runs.
  std::int64_t tasks = 0;
  std::int64_t attempts = 0;
  std::int64_t requeued = 0;  // requeues by stall recovery
  std::int64_t permanently_stalled = 0;
  // Cross-checks with the execution log.
  std::int64_t completed_without_execution = 0;  // a completed task whose handler never started
  std::int64_t executions_beyond_attempts = 0;  // handler starts a task's claims do not account for
  std::vector<std::string> cross_check_samples;

  std::int64_t lost() const { return wrong_output + failed + unfinished + missing; }
};

// How many runs of the soak flow are still started.
absl::StatusOr<std::int64_t> unfinished_runs(const std::string& url);

absl::StatusOr<Verification> verify(const std::string& url, const std::vector<StartedRun>& runs,
                                    const std::vector<StartedRun>& abandoned,
                                    const ExecutionsByTask& executions);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_VERIFY_H_
