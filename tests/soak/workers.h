// The soak's worker processes: N slots, each running one pgflow_soak_worker process at a time.
// Each is forked and exec'd with its stdout and stderr appended to DIR/worker-<slot>.log, and
// dies with the driver (PR_SET_PDEATHSIG: call every method from the thread that created the
// pool, the driver's main thread, since the signal follows the forking thread). A killed
// worker is replaced at once; a worker that exits by itself (it never should: transient
// database errors are retried) is recorded and replaced too.
#ifndef PGFLOW_TESTS_SOAK_WORKERS_H_
#define PGFLOW_TESTS_SOAK_WORKERS_H_

#include <sys/types.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"

namespace pgflow::soak {

// Resident memory of a process in KiB (VmRSS), or nullopt once it is gone.
std::optional<std::int64_t> rss_kib(pid_t pid);

class WorkerPool {
 public:
  struct Options {
    std::string binary;  // pgflow_soak_worker
    std::string url;     // what workers connect to (the proxy)
    std::string dir;     // execution logs, ready markers and worker logs
    int slots = 4;
    int max_concurrent = 4;  // handler threads per worker
  };
  struct Slot {
    pid_t pid = -1;
    int generation = 0;                     // processes this slot has run
    std::optional<std::int64_t> ready_rss;  // VmRSS when the current process became ready
  };

  explicit WorkerPool(Options options);
  ~WorkerPool();  // SIGKILLs whatever still runs

  absl::Status spawn_all();
  // SIGKILLs the worker of `slot`, reaps it and starts its replacement; returns the killed pid.
  pid_t kill_and_respawn(int slot);
  // Records RSS of workers that became ready, and reaps and replaces workers that exited by
  // themselves; returns one description per such exit.
  std::vector<std::string> poll();
  // SIGTERM to every worker, then waits up to `grace` for each; returns one line per worker
  // that did not exit 0 (killed after the grace period, or a nonzero exit).
  std::vector<std::string> stop_all(std::chrono::seconds grace);

  const std::vector<Slot>& slots() const { return slots_; }
  const std::set<pid_t>& killed() const { return killed_; }
  int respawns() const { return respawns_; }

 private:
  absl::Status spawn(int slot);

  Options options_;
  std::vector<Slot> slots_;
  std::set<pid_t> killed_;
  int respawns_ = 0;
};

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_WORKERS_H_
