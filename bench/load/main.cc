// pgflow_bench: the end-to-end load program. See bench/README.md.
//
// Against ONE PostgreSQL server in ONE run: a. raw PGMQ task cycle, b. worker throughput on a
// 1-step backlog (with and without result batching), c. end to end with producers, d. a 5-step
// DAG with a map, e. start_flow -> handler latency, f. map scaling 1k vs 10k, g. idle worker,
// h. a small step's latency during a map backlog, one queue vs one queue per step, i. cancellation,
// u. our SQL API driven as upstream's TypeScript worker drives it (and upstream's, when at hand),
// k. claims and s. starts against raw PGMQ calls, y. b1 and c1 with a million finished runs,
// l. concurrency limits, w. waits and signals, p. a fleet of workers behind PgBouncer (only when
// asked: --only=p).
// Uses DATABASE_URL when set; otherwise creates a throwaway cluster with scripts/pgcluster
// (default settings, not --fast) and removes it at the end.
#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "load/support.h"
#include "load/worker_process.h"
#include "pgflow/migrate.h"

namespace pgflow::bench {
namespace {

// The throwaway cluster, when this program started one.
class Cluster {
 public:
  explicit Cluster(std::string dir) : dir_(std::move(dir)) {}
  std::string start() {
    const std::string script = shell_quote(std::string(PGFLOW_SOURCE_DIR) + "/scripts/pgcluster");
    // Fresh every time: no data or settings left over from an earlier (maybe aborted) run.
    run_command(script + " remove " + shell_quote(dir_) + " >/dev/null");
    started_ = true;
    return run_command(script + " start " + shell_quote(dir_));
  }
  // Stops the server; `remove` also deletes its data. Safe to call from the signal thread.
  void stop(bool remove) {
    if (!started_.exchange(false)) return;
    const std::string script = shell_quote(std::string(PGFLOW_SOURCE_DIR) + "/scripts/pgcluster");
    std::string cmd =
        script + (remove ? " remove " : " stop ") + shell_quote(dir_) + " >/dev/null 2>&1";
    if (std::system(cmd.c_str()) != 0)
      std::fprintf(stderr, "pgflow_bench: could not stop the cluster in %s\n", dir_.c_str());
  }
  const std::string& dir() const { return dir_; }

 private:
  std::string dir_;
  std::atomic<bool> started_{false};
};

int bench_main(int argc, char** argv) {
  BenchContext ctx;
  try {
    ctx.flags = Flags::parse(argc, argv);
  } catch (const BenchError& e) {
    std::fprintf(stderr, "pgflow_bench: %s\n", e.what());
    return 2;
  }
  if (ctx.flags.help()) {
    Flags::print_help();
    return 0;
  }

  // SIGINT/SIGTERM go to one thread, which stops the cluster before exiting; SIGUSR1 ends it.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGUSR1);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Cluster cluster(ctx.flags.text("cluster_dir"));
  std::thread watcher([&] {
    int sig = 0;
    sigwait(&signals, &sig);
    if (sig == SIGUSR1) return;
    std::fprintf(stderr, "pgflow_bench: interrupted, stopping\n");
    cluster.stop(/*remove=*/true);
    _exit(130);
  });

  int rc = 0;
  const auto begin = Clock::now();
  try {
    ctx.concurrency = static_cast<int>(ctx.flags.integer("concurrency"));
    ctx.batch = static_cast<int>(ctx.flags.integer("batch"));
    ctx.timeout = std::chrono::milliseconds(ctx.flags.integer("timeout_seconds") * 1000);
    if (const char* env = std::getenv("DATABASE_URL"); env && *env) {
      ctx.url = env;
      progress("using DATABASE_URL");
    } else {
      progress("starting a throwaway PostgreSQL cluster in " + cluster.dir() +
               " (default settings)");
      ctx.url = cluster.start();
    }
    if (absl::Status s = migrate(ctx.url); !s.ok())
      throw BenchError(absl::StrCat("migrate: ", s.message()));

    std::printf("== pgflow_bench ==\n");
    {
      Db db = Db::open(ctx.url);
      for (const std::string& line : describe_machine(db)) std::printf("%s\n", line.c_str());
    }
    std::printf(
        "worker: max_concurrent %d, batch_size %d (flags --concurrency, --batch); scale %s\n",
        ctx.concurrency, ctx.batch, ctx.flags.text("scale").c_str());
    std::fflush(stdout);

    if (ctx.flags.runs('a')) run_pgmq_cycle(ctx);
    if (ctx.flags.runs('b')) run_backlog(ctx);
    if (ctx.flags.runs('c')) run_producers(ctx);
    if (ctx.flags.runs('d')) run_dag(ctx);
    if (ctx.flags.runs('e') || ctx.flags.runs('g')) run_latency_and_idle(ctx);
    if (ctx.flags.runs('f')) run_map_scaling(ctx);
    if (ctx.flags.runs('h')) run_step_queues(ctx);
    if (ctx.flags.runs('i')) run_cancellation(ctx);
    if (ctx.flags.runs('u')) run_upstream_protocol(ctx);
    if (ctx.flags.runs('k')) run_claims(ctx);
    if (ctx.flags.runs('s')) run_starts(ctx);
    if (ctx.flags.runs('p')) run_fleet(ctx);
    if (ctx.flags.runs('y')) run_history(ctx);
    if (ctx.flags.runs('l')) run_flow_control(ctx);
    if (ctx.flags.runs('w')) run_waits(ctx);
    add_row_verdicts(ctx);

    if (worker_problems() > 0) {
      ctx.report.note(absl::StrFormat(
          "the workers logged %d warning/error records (on stderr above)", worker_problems()));
    }
    ctx.report.print(ctx.raw_rate);
    std::printf("\ntotal time %.0f s\n", seconds_between(begin, Clock::now()));
  } catch (const std::exception& e) {
    std::fflush(stdout);
    std::fprintf(stderr, "pgflow_bench: %s\n", e.what());
    rc = 1;
  }
  if (ctx.flags.text("keep_cluster") == "1" && !ctx.url.empty() && !std::getenv("DATABASE_URL")) {
    std::printf("cluster left running: %s (stop it with scripts/pgcluster remove %s)\n",
                ctx.url.c_str(), cluster.dir().c_str());
  } else {
    cluster.stop(/*remove=*/true);
  }
  pthread_kill(watcher.native_handle(), SIGUSR1);
  watcher.join();
  return rc;
}

}  // namespace
}  // namespace pgflow::bench

int main(int argc, char** argv) {
  // Section p's worker processes are this program too (load/worker_process.h).
  if (argc > 1 && std::string_view(argv[1]) == "--worker-process")
    return pgflow::bench::worker_process_main(argc - 2, argv + 2);
  return pgflow::bench::bench_main(argc, argv);
}
