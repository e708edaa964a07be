// Worker processes for section p: pgflow_bench runs itself as a worker (`pgflow_bench
// --worker-process ...`), one EdgeWorker per process, so a fleet is what it would be in
// production: processes of their own, each with its own connections, threads and CPU.
//
// A worker process reports on its stdout, one line at a time: "ready" once its worker started,
// "counts <completed> <claim calls> <looks>" when they change (at most every 10 ms; an idle
// worker's process is not woken to report), and,
// for the probe flow, "start <input> <steady clock us>" when a handler starts (the steady clock
// is the machine's monotonic clock: comparable across processes). It stops when its stdin
// closes (so it never outlives the benchmark), then exits 0.
#ifndef PGFLOW_BENCH_LOAD_WORKER_PROCESS_H_
#define PGFLOW_BENCH_LOAD_WORKER_PROCESS_H_

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "pgflow/flow_definition.h"

namespace pgflow::bench {

// What a worker process runs: one_step_flow, or the probe flow (its handler reports when it
// starts, with the run's input, an index).
enum class FleetFlow { kWork, kProbe };

// The probe flow named `slug`: one step whose handler calls `on_start(input)` and returns it.
FlowDefinition probe_flow(std::string slug, std::function<void(int)> on_start);

// How a worker process connects.
struct WorkerProcessConfig {
  FleetFlow flow = FleetFlow::kWork;
  std::string slug;
  std::string connection_string;
  std::string listen_connection_string;  // empty: LISTEN on connection_string
  bool poll_only = false;
  int poll_interval_ms = 0;  // WorkerConfig::poll_interval; 0: its default
};

// One running worker process, seen from the benchmark.
class WorkerProcess {
 public:
  // Starts it; `on_start(input, steady_us)` is called (on a reader thread) for each probe
  // handler start. Throws BenchError when it cannot be started.
  WorkerProcess(const WorkerProcessConfig& config,
                std::function<void(int, std::int64_t)> on_start = nullptr);
  ~WorkerProcess();  // stop()
  WorkerProcess(const WorkerProcess&) = delete;
  WorkerProcess& operator=(const WorkerProcess&) = delete;

  bool ready() const { return ready_.load(); }
  bool exited() const { return eof_.load(); }
  std::int64_t completed() const { return completed_.load(); }
  std::int64_t claim_calls() const { return claims_.load(); }
  std::int64_t looks() const { return looks_.load(); }
  // Its CPU seconds so far (0 once it exited).
  double cpu_seconds() const;
  // Closes its stdin and waits until it exited; true when it exited 0.
  bool stop();

 private:
  void read_lines();

  pid_t pid_ = -1;
  int stdin_fd_ = -1;
  int stdout_fd_ = -1;
  std::function<void(int, std::int64_t)> on_start_;
  std::atomic<bool> ready_{false}, eof_{false};
  std::atomic<std::int64_t> completed_{0}, claims_{0}, looks_{0};
  std::thread reader_;
  bool stopped_ = false;
  bool ok_ = false;
};

// `n` worker processes of one configuration.
class Fleet {
 public:
  Fleet(const WorkerProcessConfig& config, int n,
        std::function<void(int, std::int64_t)> on_start = nullptr);
  // Waits until every process started its worker; throws BenchError when one exited first or
  // `timeout` passed.
  void wait_ready(std::chrono::milliseconds timeout) const;
  std::int64_t completed() const;
  std::int64_t claim_calls() const;
  std::int64_t looks() const;
  double cpu_seconds() const;
  // Stops every process (closing all stdins first, so they stop together); throws BenchError
  // when one did not exit cleanly.
  void stop();

 private:
  std::vector<std::unique_ptr<WorkerProcess>> processes_;
};

// The worker process's main (argv after "--worker-process"); its exit code.
int worker_process_main(int argc, char** argv);

}  // namespace pgflow::bench

#endif  // PGFLOW_BENCH_LOAD_WORKER_PROCESS_H_
