// Shared pieces of pgflow_bench, the end-to-end load program: flags, a throwing database
// handle, flow set-up and clean-up, a completion counter fed by the worker's metrics
// callback, percentiles, the result table and the machine description.
//
// Bench code reports a broken set-up by throwing BenchError; main() prints it, stops the
// cluster it started and exits non-zero. (Exceptions never cross pgflow's API; this is a
// program, not a library.)
#ifndef PGFLOW_BENCH_LOAD_SUPPORT_H_
#define PGFLOW_BENCH_LOAD_SUPPORT_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "pg/connection.h"
#include "pgflow/flow_definition.h"
#include "pgflow/worker.h"
#include "testing/command.h"

namespace pgflow::bench {

using Clock = std::chrono::steady_clock;

struct BenchError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

double seconds_between(Clock::time_point from, Clock::time_point to);
double millis_between(Clock::time_point from, Clock::time_point to);

// ---- flags: --key=value ----

class Flags {
 public:
  struct Spec {
    std::string name;
    std::string default_value;
    std::string help;
  };
  static const std::vector<Spec>& specs();
  // Throws BenchError on an unknown flag or a missing "=value".
  static Flags parse(int argc, char** argv);
  static void print_help();

  std::string text(const std::string& name) const;
  std::int64_t integer(const std::string& name) const;
  double number(const std::string& name) const;
  // integer(name) multiplied by --scale, at least `minimum`.
  std::int64_t scaled(const std::string& name, std::int64_t minimum = 1) const;
  // Whether section `id` (a letter of --only's help) runs (--only).
  bool runs(char id) const;
  bool help() const { return help_; }

 private:
  std::map<std::string, std::string> values_;
  bool help_ = false;
};

// ---- database ----

// A connection whose calls throw BenchError (with the statement's first line) on failure.
class Db {
 public:
  static Db open(const std::string& url, std::string_view application_name = "pgflow-bench");
  pg::Result exec(std::string_view sql, const std::vector<pg::Param>& params = {});
  std::string scalar(std::string_view sql, const std::vector<pg::Param>& params = {});
  std::int64_t integer(std::string_view sql, const std::vector<pg::Param>& params = {});
  pg::Connection& connection() { return conn_; }

 private:
  explicit Db(pg::Connection conn) : conn_(std::move(conn)) {}
  pg::Connection conn_;
};

// A slug no earlier run of this program used: "<base>_p<pid>_<n>" (valid flow slug and
// PGMQ queue name; base must be lower case letters/digits/single underscores).
std::string unique_slug(std::string_view base);

// A copy of a typed flow's runtime definition under another slug, so each benchmark has
// fresh flows and queues. (The handlers only use the typed slug in error messages.)
template <typename TypedFlow>
FlowDefinition renamed(const TypedFlow& flow, std::string slug) {
  FlowDefinition def = flow.definition();
  def.slug = std::move(slug);
  return def;
}

// Creates the flow and its queue (pgflow.ensure_flow_compiled) without starting a worker.
void compile_flow(Db& db, const FlowDefinition& flow);
// Starts `runs` runs with input `input_json`, in transactions of up to 500 runs.
void prefill_runs(Db& db, const std::string& flow_slug, std::int64_t runs,
                  const std::string& input_json);
// The same with inputs {"tenant": "t0"} ... {"tenant": "t<tenants - 1>"}, round robin (for keyed
// flows: bench section l).
void prefill_tenant_runs(Db& db, const std::string& flow_slug, std::int64_t runs, int tenants);
// Deletes the flow, its runs, queue and worker rows (for when the benchmark is over).
void drop_flow(Db& db, const std::string& flow_slug);
// VACUUM ANALYZE of pgflow's run tables after a benchmark deleted its flow, so that its dead
// rows do not slow the next one. The next benchmark therefore starts like a quiet database
// that receives a burst: planner statistics say the run tables are (nearly) empty.
void vacuum_run_tables(Db& db);

// ---- worker completion tracking ----

// Counts the tasks a worker reported completed (WorkerMetric::kCompleted) and remembers when
// the count reached its target; also sums claim statistics.
class TaskCounter {
 public:
  // Zeroes the counts and sets the number of completions to wait for.
  void reset(std::int64_t target);
  // The callback to put in WorkerConfig::metrics; the counter must outlive the worker.
  std::function<void(const WorkerMetric&)> callback();
  // Waits until the target is reached; returns the time it was, or nullopt after `timeout`.
  std::optional<Clock::time_point> wait(std::chrono::milliseconds timeout);
  std::int64_t completed() const { return completed_.load(); }
  // Mean tasks per non-empty claim, mean claim round trip (ms) and claim calls.
  double mean_claim_size() const;
  double mean_claim_ms() const;
  std::int64_t claim_calls() const { return claim_calls_.load(); }
  // Poll-only workers' looks at an idle queue (WorkerMetric::Kind::kLooked).
  std::int64_t looks() const { return looks_.load(); }

 private:
  void on_metric(const WorkerMetric& m);

  std::mutex mu_;
  std::condition_variable cv_;
  std::int64_t target_ = 0;
  std::optional<Clock::time_point> done_at_;
  std::atomic<std::int64_t> completed_{0};
  std::atomic<std::int64_t> claim_calls_{0}, looks_{0}, nonempty_claims_{0}, claimed_{0},
      claim_micros_{0};
};

struct BenchContext;

// Worker log records at warn/error level seen so far (they also go to stderr).
std::int64_t worker_problems();

// A WorkerConfig with the benchmark's concurrency and batch size, warnings to stderr.
WorkerConfig worker_config(const BenchContext& ctx, int report_batch_size, TaskCounter* counter);
// EdgeWorker::start that throws BenchError.
EdgeWorker start_worker(const FlowDefinition& flow, WorkerConfig config);

// ---- CPU accounting ----

// CPU seconds used so far by this process and, when the server runs on this machine, by the
// whole PostgreSQL cluster (postmaster + every child, including exited ones).
struct CpuSample {
  double process = 0;
  std::optional<double> server;
};

class CpuMeter {
 public:
  // Finds the cluster's postmaster through a backend of `db` (nullopt server CPU when the
  // server's processes are not visible here).
  explicit CpuMeter(Db& db);
  CpuSample sample() const;
  // "CPU per task: server X us, bench process Y us (server Z% of a core, process W%)" (another
  // word than "task" with `unit`, another name for the measured processes with `process`).
  static std::string per_task(const CpuSample& from, const CpuSample& to, std::int64_t tasks,
                              double seconds, std::string_view unit = "task",
                              std::string_view process = "bench process");
  // The server's CPU per task in microseconds (nullopt when the server is not local).
  static std::optional<double> server_us(const CpuSample& from, const CpuSample& to,
                                         std::int64_t tasks);

 private:
  std::optional<int> postmaster_;
};

// Units done, time and CPU summed over the windows of a measurement made of several (rounds
// that alternate with another measurement, say).
struct CpuTally {
  double seconds = 0;
  std::int64_t units = 0;
  CpuSample used{.process = 0, .server = 0.0};  // the server part unknown once a window's is

  void add(double window_seconds, std::int64_t window_units, const CpuSample& from,
           const CpuSample& to);
  double rate() const { return seconds > 0 ? static_cast<double>(units) / seconds : 0; }
  std::string per_unit(std::string_view unit = "task",
                       std::string_view process = "bench process") const;  // CpuMeter::per_task
  std::optional<double> server_us() const;                                 // CpuMeter::server_us
};

// CPU used so far by the backends of the running worker(s) and clients, by application name,
// as a share of one core over `seconds` ("pgflow-worker-reporter 97%, ..."); the connections
// are opened when the worker starts, so their totals cover its lifetime. Empty when the
// server is not local.
std::string backend_cpu_by_connection(Db& db, double seconds);

// utime + stime (+ cutime + cstime with `children`) of a local process in seconds.
std::optional<double> cpu_seconds_of_pid(int pid, bool children = false);

// ---- timed loops ----

// The body of one thread of a measured loop: repeats its work until `stop`, adding the units
// it completed (messages, runs, tasks) to `done`. It opens its own connections.
using LoopBody =
    std::function<void(int thread, const std::atomic<bool>& stop, std::atomic<std::int64_t>& done)>;

// Where a measured loop stood at one moment.
struct LoopMark {
  Clock::time_point at = {};
  std::int64_t done = 0;
  CpuSample cpu = {};
};

// Runs `body` on `threads` threads; after half a second of warm-up, marks the units done and
// the CPU used at the start of the measured window and every `mark_every` seconds until
// `seconds` have passed (at least two marks). A body that throws stops every thread, and the
// error is rethrown as BenchError.
std::vector<LoopMark> run_loop(const CpuMeter& meter, int threads, double seconds,
                               double mark_every, const LoopBody& body);
double units_per_second(const LoopMark& from, const LoopMark& to);

// SQL that sends messages shaped like pgflow task messages to queue $1: $2 of them in one
// pgmq.send_batch (returns how many), or one with pgmq.send (pgmq_cycle.cc).
extern const char kSendTaskMessages[];
extern const char kSendTaskMessage[];

// ---- statistics ----

// Nearest-rank percentile (p in 0..100) of `values` (need not be sorted; not empty).
double percentile(std::vector<double> values, double p);
double median(std::vector<double> values);

// ---- results ----

struct ResultRow {
  std::string id = {};    // "b1"
  std::string name = {};  // what was measured
  double value = 0;
  std::string unit = {};    // "tasks/s", "ms", ...
  bool throughput = false;  // printed with its ratio against the raw PGMQ rate
  std::string note = {};
  std::optional<double> server_us = {};  // PostgreSQL CPU per task (us), when measured
};

struct TargetRow {
  std::string target = {};       // the section 6 wording
  std::optional<bool> met = {};  // nullopt: not measured in this run
  std::string detail = {};
};

// One target of the hot-path issue (#30), printed as [MET] / [NOT MET].
struct Verdict {
  std::string what = {};  // "b1 server CPU per task over the raw cycle's"
  bool met = false;
  std::string figure = {};  // the measured figure(s)
  std::string target = {};  // "<= 2x"
  bool primary = true;
};
// A verdict on measured / reference against `bound` (met at or below it when `at_most`, at or
// above it otherwise); the figure reads "<measured> vs <reference> <unit> = <multiple>x".
Verdict multiple_verdict(std::string what, double measured, double reference, std::string_view unit,
                         double bound, bool at_most);

class Report {
 public:
  void add(ResultRow row);
  void note(std::string line);
  void target(TargetRow row);
  void verdict(Verdict v);
  // The first row with this id, or nullptr when it did not run.
  const ResultRow* find(std::string_view id) const;
  // Prints the table (ratios against `raw_rate` when > 0), the notes, the targets and the
  // verdicts (primary first).
  void print(double raw_rate) const;

 private:
  std::vector<ResultRow> rows_;
  std::vector<std::string> notes_;
  std::vector<TargetRow> targets_;
  std::vector<Verdict> verdicts_;
};

struct BenchContext {
  std::string url;
  Flags flags;
  Report report;
  int concurrency = 10;                       // WorkerConfig::max_concurrent
  int batch = 10;                             // WorkerConfig::batch_size and the raw cycle's batch
  std::chrono::milliseconds timeout{120000};  // per measurement
  double raw_rate = 0;  // tasks/s of the best raw PGMQ cycle (section a), 0 if not run
  std::optional<double> raw_server_us;  // PostgreSQL CPU per task of that raw row
};

// ---- measurements several sections share (worker_runs.cc) ----

// A flow of one trivial step, "work" (the engine's overhead per task dominates).
FlowDefinition one_step_flow(std::string slug);

// How producers start runs: Client::start_flow (the run's state read back and parsed) or the
// lean Client::start_run (only the run id).
enum class StartCall { kStartFlow, kStartRun };

// One worker throughput measurement on a compiled flow (which may hold earlier runs).
struct Throughput {
  bool finished = false;  // every run completed within the timeout
  std::int64_t tasks = 0;
  std::int64_t completed = 0;  // runs completed
  double seconds = 0;          // the timed part
  CpuSample cpu0 = {}, cpu1 = {};
  std::string note = {};      // how it went (or how far it got), claims and CPU per task
  std::string backends = {};  // backend_cpu_by_connection
  double rate() const { return finished ? static_cast<double>(tasks) / seconds : 0; }
  std::optional<double> server_us() const { return CpuMeter::server_us(cpu0, cpu1, tasks); }
};
// b: `runs` runs started while no worker runs (then ANALYZE when `analyze`); an EdgeWorker
// with `report_batch` drains them, timed from EdgeWorker::start to the last completion. The
// runs' input is 1, or with `tenants` > 0 prefill_tenant_runs's.
Throughput drain_backlog(const BenchContext& ctx, Db& db, const FlowDefinition& flow,
                         std::int64_t runs, int report_batch, bool analyze, int tenants = 0);
// c: `producers` threads start `runs` runs with `call` while a worker drains them, timed from
// the first start to the last completion; producers and worker connect with `url`.
Throughput produce_and_drain(const BenchContext& ctx, const std::string& url, Db& db,
                             const FlowDefinition& flow, StartCall call, std::int64_t runs,
                             int producers);
// The result row of a Throughput in tasks/s (named "... (DID NOT FINISH)" when it did not),
// and its backends' CPU below it.
void add_throughput_row(BenchContext& ctx, const std::string& id, const std::string& name,
                        const Throughput& t);

// ---- sections ----

void run_pgmq_cycle(BenchContext& ctx);         // a
void run_backlog(BenchContext& ctx);            // b
void run_producers(BenchContext& ctx);          // c
void run_dag(BenchContext& ctx);                // d
void run_latency_and_idle(BenchContext& ctx);   // e, g
void run_map_scaling(BenchContext& ctx);        // f
void run_step_queues(BenchContext& ctx);        // h
void run_cancellation(BenchContext& ctx);       // i
void run_upstream_protocol(BenchContext& ctx);  // u
void run_starts(BenchContext& ctx);             // s
void run_claims(BenchContext& ctx);             // k
void run_history(BenchContext& ctx);            // y
void run_flow_control(BenchContext& ctx);       // l
void run_waits(BenchContext& ctx);              // w
void run_fleet(BenchContext& ctx);              // p (not in the default --only: needs PgBouncer)
// The verdicts on rows of the other sections (b1, c1, d1, c3, e, f4), after they ran.
void add_row_verdicts(BenchContext& ctx);

// ---- the machine ----

// Hardware, OS, PostgreSQL version and settings, as printable lines.
std::vector<std::string> describe_machine(Db& db);

// Prints a progress line to stderr (the results go to stdout).
void progress(const std::string& line);

// ---- shell ----

// Runs a shell command and returns its stdout (trimmed); throws BenchError on a non-zero exit.
std::string run_command(const std::string& command);
// `s` quoted for a POSIX shell (the tests' helper, compiled into this program too).
using pgflow::testing::shell_quote;

}  // namespace pgflow::bench

#endif  // PGFLOW_BENCH_LOAD_SUPPORT_H_
