// Handler executions, recorded by the worker processes and counted by the driver.
//
// Every worker process appends one line per handler execution to its own file
// `<dir>/executions.<pid>.log`, with one write(2) per line so a SIGKILL loses nothing already
// written: `S run_id step task_index attempt pid unix_us` when a handler starts, and the same
// with `F` when it returns an error. The files live outside the database on purpose: recording
// must not fail, slow down or be rolled back when PostgreSQL restarts or a connection is cut.
//
// A duplicate is a handler execution of a task (run, step, task index) beyond its first that
// no failed execution explains: what at-least-once delivery allows after a crash.
#ifndef PGFLOW_TESTS_SOAK_EXECUTION_LOG_H_
#define PGFLOW_TESTS_SOAK_EXECUTION_LOG_H_

#include <sys/types.h>

#include <compare>
#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pgflow/context.h"

namespace pgflow::soak {

// The worker side: appends this process's executions to its file.
class ExecutionWriter {
 public:
  // Opens (creating) `<dir>/executions.<pid>.log` for appending.
  static absl::StatusOr<ExecutionWriter> open(const std::string& dir);
  ExecutionWriter(ExecutionWriter&& other) noexcept : fd_(other.fd_) { other.fd_ = -1; }
  ExecutionWriter& operator=(ExecutionWriter&&) = delete;
  ~ExecutionWriter();

  // One line, one write(2). Thread-safe (O_APPEND).
  void record(const pgflow::Context& ctx, char event) const;

 private:
  explicit ExecutionWriter(int fd) : fd_(fd) {}
  int fd_ = -1;
};

// The driver side.
struct TaskKey {
  std::string run_id;
  std::string step;
  int task_index = 0;
  auto operator<=>(const TaskKey&) const = default;
};

struct Execution {
  int attempt = 0;
  pid_t pid = 0;
  std::int64_t unix_us = 0;
  bool failed = false;  // the handler returned an error (an `F` line of the same pid and attempt)
};

// Every task's executions, oldest first.
using ExecutionsByTask = std::map<TaskKey, std::vector<Execution>>;

// Reads every executions.*.log file of `dir`; a malformed line is an error naming the file.
absl::StatusOr<ExecutionsByTask> read_executions(const std::string& dir);

struct DuplicateStats {
  std::int64_t executions = 0;   // handler starts
  std::int64_t failed = 0;       // of which returned an error (then retried: not duplicates)
  std::int64_t tasks = 0;        // distinct tasks executed
  std::int64_t duplicates = 0;   // executions beyond the first not explained by a failure
  std::int64_t after_kill = 0;   // ... whose previous execution ran in a SIGKILLed worker
  std::int64_t unexplained = 0;  // ... whose previous execution's worker was not killed
  int max_per_task = 0;          // most executions of one task
  std::vector<std::string> unexplained_samples;  // a few, for the summary
};

// Counts duplicates; `killed` are the pids the driver SIGKILLed.
DuplicateStats count_duplicates(const ExecutionsByTask& executions, const std::set<pid_t>& killed);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_EXECUTION_LOG_H_
