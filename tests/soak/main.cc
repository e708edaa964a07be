// pgflow_soak: the fault soak (tests/soak/README.md). Starts its own PostgreSQL cluster, a
// loopback proxy, N worker processes connected through it and a producer; kills workers,
// restarts PostgreSQL in immediate mode and cuts connections for --duration; then lets every
// run finish, checks each run's output, counts duplicate handler executions and prints a
// summary. Exits 0 when nothing was lost, 1 when the checks failed, 2 when the soak itself
// could not run.
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_format.h"
#include "absl/time/time.h"
#include "chaos.h"
#include "cluster.h"
#include "execution_log.h"
#include "pgflow/client.h"
#include "producer.h"
#include "stall_watch.h"
#include "summary.h"
#include "testing/tcp_proxy.h"
#include "verify.h"
#include "watchdog.h"
#include "worker_logs.h"
#include "workers.h"

ABSL_FLAG(absl::Duration, duration, absl::Minutes(10),
          "how long runs are produced and faults injected");
ABSL_FLAG(int, workers, 4,
          "worker processes (worker 0, the witness, is never killed when there are 2 or more)");
ABSL_FLAG(int, max_concurrent, 4, "handler threads per worker");
ABSL_FLAG(double, rate, 10, "runs started per second");
ABSL_FLAG(uint64_t, seed, 0, "seed of the inputs and the fault schedule (0: random, printed)");
ABSL_FLAG(absl::Duration, kill_every, absl::Seconds(10),
          "mean interval between worker SIGKILLs (0: none)");
ABSL_FLAG(absl::Duration, restart_every, absl::Seconds(60),
          "mean interval between immediate PostgreSQL restarts (0: none)");
ABSL_FLAG(absl::Duration, cut_every, absl::Seconds(20),
          "mean interval between proxy connection cuts (0: none)");
ABSL_FLAG(absl::Duration, drain_timeout, absl::Minutes(5),
          "how long runs may take to finish after the faults stop");
ABSL_FLAG(bool, unsafe_async_commit, false,
          "leave synchronous_commit off (a check of the checks: immediate restarts then lose "
          "acknowledged "
          "commits, and the soak must report lost runs)");
ABSL_FLAG(bool, keep, false, "keep the soak's directory (logs) even when it passes");
ABSL_FLAG(std::string, worker_bin, PGFLOW_SOAK_WORKER_BIN, "the pgflow_soak_worker program");
ABSL_FLAG(std::string, pgflow_cli, PGFLOW_CLI_BIN, "the pgflow program (for `pgflow migrate`)");
ABSL_FLAG(std::string, source_dir, PGFLOW_SOURCE_DIR, "the checkout (for scripts/pgcluster)");

namespace {

using namespace pgflow::soak;  // NOLINT: a program's main file
using Clock = std::chrono::steady_clock;

std::atomic<bool> g_interrupted{false};

void on_signal(int) { g_interrupted = true; }

std::chrono::milliseconds ms(absl::Duration d) { return absl::ToChronoMilliseconds(d); }

double seconds_since(Clock::time_point t) {
  return std::chrono::duration<double>(Clock::now() - t).count();
}

// Everything the soak creates on disk, removed at the end: the cluster always (also when
// the soak fails or cannot run), the folder with the logs only when the soak passed.
class Workspace {
 public:
  Workspace(const std::string& source_dir, std::string dir)
      : dir_(std::move(dir)), cluster_(source_dir, dir_ + "/cluster") {}
  ~Workspace() { cluster_.remove(); }
  const std::string& dir() const { return dir_; }
  Cluster& cluster() { return cluster_; }
  // Keeps the server log beside the workers' logs, removes the cluster and, when `keep_logs`
  // is false, the whole folder.
  void finish(bool keep_logs) {
    if (keep_logs) cluster_.copy_log(dir_ + "/server.log");
    cluster_.remove();
    if (!keep_logs) std::filesystem::remove_all(dir_);
  }

 private:
  std::string dir_;
  Cluster cluster_;
};

struct Settings {
  std::chrono::milliseconds duration;
  int workers;
  int max_concurrent;
  double rate;
  std::uint64_t seed;
  std::chrono::milliseconds kill_every, restart_every, cut_every, drain_timeout;

  std::string describe() const {
    return absl::StrFormat(
        "duration %.0f s, %d workers x %d handler threads, %.1f runs/s, kill every %.0f s, restart "
        "every %.0f s, "
        "cut every %.0f s, seed %u",
        duration.count() / 1e3, workers, max_concurrent, rate, kill_every.count() / 1e3,
        restart_every.count() / 1e3, cut_every.count() / 1e3, seed);
  }
};

int cannot_run(Workspace& ws, const std::string& what, const absl::Status& s) {
  std::fprintf(stderr, "pgflow_soak: %s: %s\n", what.c_str(), s.ToString().c_str());
  ws.finish(/*keep_logs=*/true);
  std::fprintf(stderr, "pgflow_soak: logs kept in %s\n", ws.dir().c_str());
  return 2;
}

// Waits until every worker has started (created its ready marker).
absl::Status wait_for_workers(WorkerPool& workers, std::chrono::seconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    std::vector<std::string> exits = workers.poll();
    if (!exits.empty()) return absl::InternalError(exits.front());
    bool all = true;
    for (const auto& slot : workers.slots()) all = all && slot.ready_rss.has_value();
    if (all) return absl::OkStatus();
    if (Clock::now() > deadline) return absl::DeadlineExceededError("workers did not start");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

}  // namespace

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "the pgflow fault soak: worker kills, PostgreSQL restarts and connection cuts under load; "
      "see tests/soak/README.md");
  // --kill-every and --kill_every alike (Abseil's flags only know underscores).
  std::vector<std::string> args(argv, argv + argc);
  std::vector<char*> argv_underscored;
  for (std::string& a : args) {
    if (a.starts_with("--")) {
      const auto name_end =
          a.begin() + static_cast<std::ptrdiff_t>(std::min(a.find('='), a.size()));
      std::replace(a.begin() + 2, name_end, '-', '_');
    }
    argv_underscored.push_back(a.data());
  }
  absl::ParseCommandLine(argc, argv_underscored.data());
  Settings settings{ms(absl::GetFlag(FLAGS_duration)),
                    absl::GetFlag(FLAGS_workers),
                    absl::GetFlag(FLAGS_max_concurrent),
                    absl::GetFlag(FLAGS_rate),
                    absl::GetFlag(FLAGS_seed),
                    ms(absl::GetFlag(FLAGS_kill_every)),
                    ms(absl::GetFlag(FLAGS_restart_every)),
                    ms(absl::GetFlag(FLAGS_cut_every)),
                    ms(absl::GetFlag(FLAGS_drain_timeout))};
  if (settings.workers < 1 || settings.max_concurrent < 1 || settings.rate <= 0 ||
      settings.duration.count() <= 0) {
    std::fprintf(
        stderr,
        "pgflow_soak: --workers, --max_concurrent, --rate and --duration must be positive\n");
    return 2;
  }
  if (settings.seed == 0) settings.seed = std::random_device{}() | 1;
  signal(SIGINT, on_signal);
  signal(SIGTERM, on_signal);

  char dir_template[] = "/tmp/pgflow-soak-XXXXXX";
  if (mkdtemp(dir_template) == nullptr) {
    std::perror("pgflow_soak: mkdtemp");
    return 2;
  }
  chmod(dir_template, 0755);  // the server's user reaches the cluster inside
  // Declared before the workspace, so destroyed after it: the cluster is gone by then.
  Watchdog watchdog(absl::GetFlag(FLAGS_source_dir), std::string(dir_template) + "/cluster");
  Workspace ws(absl::GetFlag(FLAGS_source_dir), dir_template);
  std::fprintf(stderr, "pgflow_soak: %s\npgflow_soak: working in %s\n", settings.describe().c_str(),
               ws.dir().c_str());

  // ---- set-up: cluster, schema, proxy, workers, producer ----
  if (absl::Status s = ws.cluster().start(!absl::GetFlag(FLAGS_unsafe_async_commit)); !s.ok()) {
    return cannot_run(ws, "starting the cluster", s);
  }
  if (absl::Status s = ws.cluster().migrate(absl::GetFlag(FLAGS_pgflow_cli)); !s.ok()) {
    return cannot_run(ws, "migrating", s);
  }
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy = TcpProxy::start(ws.cluster().port());
  if (!proxy.ok()) return cannot_run(ws, "starting the proxy", proxy.status());
  std::fprintf(stderr, "pgflow_soak: server %s, workers through the proxy on port %d\n",
               ws.cluster().url().c_str(), (*proxy)->port());
  WorkerPool workers(
      {.binary = absl::GetFlag(FLAGS_worker_bin),
       .url = absl::StrFormat("postgresql://postgres@127.0.0.1:%d/postgres", (*proxy)->port()),
       .dir = ws.dir(),
       .slots = settings.workers,
       .max_concurrent = settings.max_concurrent});
  if (absl::Status s = workers.spawn_all(); !s.ok())
    return cannot_run(ws, "starting the workers", s);
  // The first worker compiles the flow; the producer starts once every worker is up.
  if (absl::Status s = wait_for_workers(workers, std::chrono::seconds(120)); !s.ok()) {
    return cannot_run(ws, "waiting for the workers", s);
  }
  SoakReport report;
  report.settings = settings.describe();
  report.witness_ready_rss = workers.slots()[kWitnessSlot].ready_rss;
  absl::StatusOr<pgflow::Client> client =
      pgflow::Client::connect({.connection_string = ws.cluster().url(), .max_connections = 2});
  if (!client.ok()) return cannot_run(ws, "connecting the client", client.status());

  // ---- the soak ----
  auto stall_watch = std::make_unique<StallWatch>(ws.cluster().url(), ws.dir());
  const auto soak_start = Clock::now();
  auto producer = std::make_unique<Producer>(*client, settings.rate, settings.seed);
  const ChaosPlan plan{settings.duration, settings.kill_every, settings.restart_every,
                       settings.cut_every, settings.seed ^ 0x9e3779b97f4a7c15ULL};
  absl::Status chaos = run_chaos(plan, workers, ws.cluster(), **proxy, g_interrupted, report.chaos);
  producer->stop();
  report.soak_seconds = seconds_since(soak_start);
  if (!chaos.ok()) return cannot_run(ws, "injecting faults", chaos);
  report.producer = producer->counts();
  std::fprintf(
      stderr,
      "pgflow_soak: faults stopped after %.0f s; %lld runs started; waiting for them to finish\n",
      report.soak_seconds, static_cast<long long>(report.producer.started));

  // ---- drain: every run finishes (workers that exit meanwhile are still replaced) ----
  const auto drain_start = Clock::now();
  const auto drain_deadline = drain_start + settings.drain_timeout;
  while (!g_interrupted && Clock::now() < drain_deadline) {
    for (std::string& exit : workers.poll())
      report.chaos.unexpected_exits.push_back(std::move(exit));
    absl::StatusOr<std::int64_t> left = unfinished_runs(ws.cluster().url());
    if (left.ok() && *left == 0) {
      report.drained = true;
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
  }
  report.drain_seconds = seconds_since(drain_start);
  report.stalled_under_live_workers = stall_watch->stalled_under_live_workers();
  stall_watch.reset();
  report.deadlocks = deadlocks_in_log(ws.cluster().log_path());

  // ---- the end: memory, a clean stop, the checks ----
  for (const auto& slot : workers.slots()) report.end_rss.push_back(rss_kib(slot.pid));
  report.witness_end_rss = report.end_rss[kWitnessSlot];
  report.stop_problems = workers.stop_all(std::chrono::seconds(30));
  report.respawns = workers.respawns();
  report.proxy_accepted = (*proxy)->accepted();
  report.proxy_refused = (*proxy)->refused();
  report.claims_cut_after_commit = (*proxy)->cuts_after_commit();
  absl::StatusOr<ExecutionsByTask> executions = read_executions(ws.dir());
  if (!executions.ok()) return cannot_run(ws, "reading the execution logs", executions.status());
  report.duplicates = count_duplicates(*executions, workers.killed());
  absl::StatusOr<Verification> verification =
      verify(ws.cluster().url(), producer->runs(), producer->abandoned(), *executions);
  if (!verification.ok()) return cannot_run(ws, "verifying the runs", verification.status());
  report.verification = *std::move(verification);
  report.logs = digest_worker_logs(ws.dir());

  print_summary(report, stdout);
  std::fflush(stdout);
  const bool passed = failures(report).empty() && !g_interrupted;
  const bool keep = !passed || absl::GetFlag(FLAGS_keep);
  ws.finish(keep);
  if (keep)
    std::printf("  logs        %s (worker-<n>.log, executions.<pid>.log, server.log)\n",
                ws.dir().c_str());
  return passed ? 0 : 1;
}
