// p. A fleet of workers behind a transaction pooler (docs/deploying-at-scale.md): 20 workers
// (max_concurrent 10 each) drain a backlog of one-step runs directly (LISTEN on their
// connections), through PgBouncer in transaction mode with a pool of 8 and poll-only, and
// through it with a direct LISTEN connection each, in alternating rounds; the peak number of
// server backends the workers hold; commit -> handler latency of 20 idle workers in both
// pooled wake-up modes; the server CPU of 20 idle poll-only workers; and the drain with 1, 5
// and 20 workers (SKIP LOCKED contention: claims per task).
//
// The workers are EdgeWorkers of this one process, each with its own connections and threads:
// to the server they are 20 worker processes (the database sees the same connections and
// statements). The pooler is scripts/pgpooler in front of the throwaway cluster, or
// --pooler_url (then with DATABASE_URL).
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "load/support.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"

namespace pgflow::bench {
namespace {

constexpr int kFleet = 20;
constexpr int kPoolSize = 8;

// How the fleet's workers connect.
enum class Mode { kDirect, kPooledPollOnly, kPooledListen };

std::string mode_name(Mode mode) {
  switch (mode) {
    case Mode::kDirect:
      return "direct";
    case Mode::kPooledPollOnly:
      return "pooled, poll-only";
    case Mode::kPooledListen:
      return "pooled + direct LISTEN";
  }
  return "";
}

struct Urls {
  std::string direct;
  std::string pooled;
};

WorkerConfig fleet_config(const BenchContext& ctx, const Urls& urls, Mode mode,
                          TaskCounter* counter) {
  WorkerConfig c = worker_config(ctx, 64, counter);
  c.max_concurrent = 10;
  c.batch_size = 10;
  if (mode != Mode::kDirect) c.connection_string = urls.pooled;
  if (mode == Mode::kPooledPollOnly) c.poll_only = true;
  if (mode == Mode::kPooledListen) c.listen_connection_string = urls.direct;
  return c;
}

// Samples the number of server backends of the database other than the bench's own that did
// something since `since` (so that the pooler's idle server connections of an earlier round do
// not count) until stopped; keeps the highest.
class BackendSampler {
 public:
  BackendSampler(const std::string& url, std::string mine, std::string since)
      : thread_([this, url, mine = std::move(mine), since = std::move(since)] {
          Db db = Db::open(url, "pgflow-bench-sampler");
          while (!stop_.load()) {
            const std::int64_t n = db.integer(
                "select count(*) from pg_stat_activity where datname = current_database() "
                "and backend_type = 'client backend' and pid <> pg_backend_pid() "
                "and pid <> $1::int and state_change >= $2::timestamptz",
                {mine, since});
            most_ = std::max(most_.load(), n);
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
          }
        }) {}
  std::int64_t stop() {
    stop_ = true;
    if (thread_.joinable()) thread_.join();
    return most_.load();
  }

 private:
  std::atomic<bool> stop_{false};
  std::atomic<std::int64_t> most_{0};
  std::thread thread_;
};

struct Drain {
  double rate = 0;  // tasks/s, 0 when it did not finish
  std::int64_t tasks = 0;
  double seconds = 0;
  CpuSample cpu0, cpu1;
  std::int64_t peak_backends = 0;
  std::int64_t claim_calls = 0;
};

// `workers` workers in `mode` drain `tasks` pre-filled one-step runs, timed from the first
// worker's start to the last completion.
Drain drain(const BenchContext& ctx, Db& db, const CpuMeter& meter, const Urls& urls, Mode mode,
            int workers, std::int64_t tasks) {
  const FlowDefinition flow = one_step_flow(unique_slug("bench_fleet"));
  compile_flow(db, flow);
  prefill_runs(db, flow.slug, tasks, "1");
  db.exec("analyze pgflow.runs, pgflow.step_tasks, pgflow.step_states");

  TaskCounter counter;
  counter.reset(tasks);
  BackendSampler sampler(urls.direct, db.scalar("select pg_backend_pid()::text"),
                         db.scalar("select clock_timestamp()::text"));
  Drain d;
  d.tasks = tasks;
  d.cpu0 = meter.sample();
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> done;
  {
    std::vector<EdgeWorker> fleet;
    for (int i = 0; i < workers; ++i)
      fleet.push_back(start_worker(flow, fleet_config(ctx, urls, mode, &counter)));
    done = counter.wait(ctx.timeout);
    d.cpu1 = meter.sample();
    for (EdgeWorker& w : fleet) w.stop();
    for (EdgeWorker& w : fleet) (void)w.wait();
  }
  d.peak_backends = sampler.stop();
  d.claim_calls = counter.claim_calls();
  if (done) {
    d.seconds = seconds_between(t0, *done);
    d.rate = static_cast<double>(tasks) / d.seconds;
  }
  drop_flow(db, flow.slug);
  vacuum_run_tables(db);
  return d;
}

// Sums the rounds of one mode.
struct Rounds {
  CpuTally cpu;
  std::int64_t peak_backends = 0;
  std::int64_t claim_calls = 0;
  bool finished = true;
  void add(const Drain& d) {
    finished = finished && d.rate > 0;
    cpu.add(d.seconds, d.tasks, d.cpu0, d.cpu1);
    peak_backends = std::max(peak_backends, d.peak_backends);
    claim_calls += d.claim_calls;
  }
  double rate() const { return finished ? cpu.rate() : 0; }
};

// Commit -> handler start of `probes` runs started one at a time (100 ms apart) while 20
// workers in `mode` idle; milliseconds.
std::vector<double> probe_latency(const BenchContext& ctx, Db& db, const Urls& urls, Mode mode,
                                  int probes) {
  auto started =
      std::make_shared<std::vector<std::atomic<std::int64_t>>>(static_cast<size_t>(probes));
  const FlowDefinition flow = renamed(Flow<"benchFleetProbe", int>().step<"work">([started](int i) {
    const auto now =
        std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
            .count();
    (*started)[static_cast<size_t>(i)].store(now);
    return i;
  }),
                                      unique_slug("bench_fleet_probe"));
  compile_flow(db, flow);
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = urls.direct, .max_connections = 1});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  std::vector<double> latencies;
  {
    std::vector<EdgeWorker> fleet;
    for (int i = 0; i < kFleet; ++i)
      fleet.push_back(start_worker(flow, fleet_config(ctx, urls, mode, nullptr)));
    std::this_thread::sleep_for(std::chrono::seconds(2));  // idle: poll-only backs off
    for (int i = 0; i < probes; ++i) {
      if (absl::Status s = client->start_run(flow.slug, i).status(); !s.ok())
        throw BenchError(absl::StrCat("p: start_run: ", s.message()));
      const auto committed =
          std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
              .count();
      const auto deadline = Clock::now() + ctx.timeout;
      while ((*started)[static_cast<size_t>(i)].load() == 0 && Clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::microseconds(200));
      const std::int64_t at = (*started)[static_cast<size_t>(i)].load();
      if (at == 0) throw BenchError("p: a probe's handler never started");
      latencies.push_back(static_cast<double>(std::max<std::int64_t>(at - committed, 0)) / 1000);
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    for (EdgeWorker& w : fleet) w.stop();
    for (EdgeWorker& w : fleet) (void)w.wait();
  }
  drop_flow(db, flow.slug);
  return latencies;
}

// Runs scripts/pgpooler `verb` on the pooler next to the throwaway cluster (`extra` after
// its folder); its output.
std::string pooler(const BenchContext& ctx, const std::string& verb, const std::string& extra) {
  const std::string dir = ctx.flags.text("cluster_dir");
  return run_command(absl::StrCat(shell_quote(std::string(PGFLOW_SOURCE_DIR) + "/scripts/pgpooler"),
                                  " ", verb, " ", shell_quote(dir + "-pooler"), " ", extra));
}

}  // namespace

void run_fleet(BenchContext& ctx) {
  Urls urls{.direct = ctx.url, .pooled = ctx.flags.text("pooler_url")};
  // Stops the pooler this section started, however the section ends.
  struct StopPooler {
    const BenchContext& ctx;
    bool started = false;
    ~StopPooler() {
      if (!started) return;
      try {
        (void)pooler(ctx, "stop", "");
      } catch (const BenchError&) {
        std::fprintf(stderr, "pgflow_bench: could not stop the pooler\n");
      }
    }
  } stop_pooler{ctx};
  if (urls.pooled.empty()) {
    if (std::getenv("DATABASE_URL") != nullptr) {
      throw BenchError("p: with DATABASE_URL, give the pooler's URL: --pooler_url=...");
    }
    urls.pooled = pooler(
        ctx, "start",
        absl::StrCat(shell_quote(ctx.flags.text("cluster_dir")), " --pool-size ", kPoolSize));
    stop_pooler.started = true;
  }
  const std::int64_t tasks = ctx.flags.scaled("fleet_tasks");
  const int rounds = static_cast<int>(ctx.flags.integer("fleet_rounds"));
  progress(absl::StrFormat(
      "p: %d workers x 10 slots drain %d tasks: direct, pooled (PgBouncer transaction mode, pool "
      "%d) poll-only and with a direct LISTEN, %d alternating rounds",
      kFleet, tasks, kPoolSize, rounds));
  Db db = Db::open(ctx.url);
  const CpuMeter meter(db);

  const Mode modes[] = {Mode::kDirect, Mode::kPooledPollOnly, Mode::kPooledListen};
  Rounds by_mode[3];
  for (int r = 0; r < rounds; ++r) {
    for (int m = 0; m < 3; ++m) {
      const int which = (m + r) % 3;  // rotate who goes first
      by_mode[which].add(drain(ctx, db, meter, urls, modes[which], kFleet, tasks));
    }
  }
  for (int m = 0; m < 3; ++m) {
    const Rounds& rm = by_mode[m];
    ctx.report.add(
        {.id = absl::StrCat("p", m + 1),
         .name =
             absl::StrFormat("%d workers drain %d tasks, %s", kFleet, tasks, mode_name(modes[m])),
         .value = rm.rate(),
         .unit = "tasks/s",
         .throughput = true,
         .note = absl::StrFormat(
             "peak server backends of the workers %d; %.2f claims per task; %s", rm.peak_backends,
             static_cast<double>(rm.claim_calls) / static_cast<double>(rm.cpu.units),
             rm.cpu.per_unit()),
         .server_us = rm.cpu.server_us()});
  }
  for (int m = 1; m < 3; ++m) {
    ctx.report.verdict(
        multiple_verdict(absl::StrFormat("p%d tasks/s %s over direct", m + 1, mode_name(modes[m])),
                         by_mode[m].rate(), by_mode[0].rate(), "tasks/s", 0.8, /*at_most=*/false));
  }
  ctx.report.verdict({.what = "p2 peak server backends of 20 poll-only workers through a pool of 8",
                      .met = by_mode[1].finished && by_mode[1].peak_backends <= kPoolSize,
                      .figure = absl::StrFormat("%d", by_mode[1].peak_backends),
                      .target = absl::StrFormat("<= %d", kPoolSize)});
  ctx.report.verdict(
      {.what = "p3 peak server backends, pooled with 2 direct LISTEN connections per worker",
       .met = by_mode[2].finished && by_mode[2].peak_backends <= kPoolSize + 2 * kFleet,
       .figure = absl::StrFormat("%d", by_mode[2].peak_backends),
       .target = absl::StrFormat("<= %d + %d", kPoolSize, 2 * kFleet)});

  // Latency, both pooled wake-up modes.
  const int probes = static_cast<int>(ctx.flags.scaled("fleet_probes", 10));
  for (Mode mode : {Mode::kPooledListen, Mode::kPooledPollOnly}) {
    const std::vector<double> ms = probe_latency(ctx, db, urls, mode, probes);
    ctx.report.add({.id = mode == Mode::kPooledListen ? "p4" : "p5",
                    .name = absl::StrFormat("commit -> handler, %d idle workers %s: p50", kFleet,
                                            mode_name(mode)),
                    .value = percentile(ms, 50),
                    .unit = "ms",
                    .note = absl::StrFormat("p99 %.1f ms over %d runs (poll_interval 1 s)",
                                            percentile(ms, 99), probes)});
  }

  // Idle cost of 20 poll-only workers through the pooler.
  {
    const FlowDefinition flow = one_step_flow(unique_slug("bench_fleet_idle"));
    compile_flow(db, flow);
    const double idle_s = static_cast<double>(ctx.flags.integer("idle_seconds")) * 2;
    // The server's own idle CPU (checkpointer, autovacuum launcher, ...) first, as a reference.
    const CpuSample quiet0 = meter.sample();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    const CpuSample quiet1 = meter.sample();
    TaskCounter counter;
    std::vector<EdgeWorker> fleet;
    for (int i = 0; i < kFleet; ++i)
      fleet.push_back(start_worker(flow, fleet_config(ctx, urls, Mode::kPooledPollOnly, &counter)));
    std::this_thread::sleep_for(std::chrono::seconds(3));  // backed off
    const std::int64_t calls0 = counter.claim_calls();
    const CpuSample cpu0 = meter.sample();
    std::this_thread::sleep_for(std::chrono::duration<double>(idle_s));
    const CpuSample cpu1 = meter.sample();
    const double polls = static_cast<double>(counter.claim_calls() - calls0) / idle_s;
    for (EdgeWorker& w : fleet) w.stop();
    for (EdgeWorker& w : fleet) (void)w.wait();
    drop_flow(db, flow.slug);
    // The fleet's share: the server's CPU with the fleet idling, less its CPU alone.
    std::optional<double> with_fleet, alone, server;
    if (cpu0.server && cpu1.server && quiet0.server && quiet1.server) {
      with_fleet = 100 * (*cpu1.server - *cpu0.server) / idle_s;
      alone = 100 * (*quiet1.server - *quiet0.server) / idle_s;
      server = *with_fleet - *alone;
    }
    ctx.report.add(
        {.id = "p6",
         .name =
             absl::StrFormat("%d idle poll-only workers through the pooler: server CPU", kFleet),
         .value = server.value_or(-1),
         .unit = "% of a core",
         .note = absl::StrFormat(
             "%.2f%% with the fleet less %.2f%% without it, %.0f s each; %.1f polls/s in all; "
             "the workers' process %.2f%% of a core",
             with_fleet.value_or(-1), alone.value_or(-1), idle_s, polls,
             100 * (cpu1.process - cpu0.process) / idle_s)});
    ctx.report.verdict({.what = "p6 server CPU of 20 idle poll-only workers (beyond its own)",
                        .met = server.has_value() && *server < 1.0,
                        .figure = server ? absl::StrFormat("%.2f%% of a core", *server)
                                         : std::string("not measured (server not local)"),
                        .target = "< 1% of a core"});
  }

  // The curve: 1 and 5 workers direct (20: p1).
  for (int workers : {1, 5}) {
    const Drain d = drain(ctx, db, meter, urls, Mode::kDirect, workers, tasks);
    ctx.report.add(
        {.id = absl::StrCat("p7.", workers),
         .name = absl::StrFormat("%d worker%s drain %d tasks, direct", workers,
                                 workers == 1 ? "" : "s", tasks),
         .value = d.rate,
         .unit = "tasks/s",
         .throughput = true,
         .note = absl::StrFormat("%.2f claims per task; %s",
                                 static_cast<double>(d.claim_calls) / static_cast<double>(tasks),
                                 CpuMeter::per_task(d.cpu0, d.cpu1, tasks, d.seconds)),
         .server_us = CpuMeter::server_us(d.cpu0, d.cpu1, tasks)});
  }
}

}  // namespace pgflow::bench
