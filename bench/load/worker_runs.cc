// Worker throughput: b (1-step flow draining a pre-filled backlog, with and without result
// batching), c (producers start runs while the worker runs), d (a 5-step DAG with a map) and
// f (time per element of a 1k and a 10k map).
//
// Every measurement uses a fresh flow (and so a fresh queue) under a unique slug, and deletes
// it with its runs afterwards. Completion is observed through the worker's metrics callback
// (WorkerMetric::kCompleted arrives once the database acknowledged the completion, and a run
// completes in the same transaction as its last task), and checked in SQL at the end.
#include <algorithm>
#include <functional>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "load/support.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"

namespace pgflow::bench {

FlowDefinition one_step_flow(std::string slug) {
  return renamed(Flow<"benchOneStep", int>().step<"work">([](int x) { return x + 1; }),
                 std::move(slug));
}

namespace {

struct DagReport {
  int total = 0;
  int count = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(DagReport, total, count)

// fetch -> process (map, n elements) -> total -> report
// fetch -> count ------------------------------> report      (n + 4 tasks per run, n = input)
auto dag_flow() {
  return Flow<"benchDag", int>()
      .array<"fetch">([](int n) {
        std::vector<int> v(static_cast<size_t>(std::max(n, 0)));
        std::iota(v.begin(), v.end(), 0);
        return v;
      })
      .map<"process">(over<"fetch">, [](int x) { return x * 2; })
      .step<"count">(after<"fetch">,
                     [](const std::vector<int>& v) { return static_cast<int>(v.size()); })
      .step<"total">(
          after<"process">,
          [](const std::vector<int>& v) { return std::accumulate(v.begin(), v.end(), 0); })
      .step<"report">(after<"total", "count">, [](int total, int count) {
        return DagReport{total, count};
      });
}

// A root map over the run input.
auto map_flow() {
  return Flow<"benchMap", std::vector<int>>().map<"square">([](int x) { return x * x; });
}

std::int64_t completed_runs(Db& db, const std::string& slug) {
  return db.integer(
      "select count(*) from pgflow.runs where flow_slug = $1 and status = 'completed'", {slug});
}

std::string claim_note(const TaskCounter& c, std::int64_t tasks) {
  return absl::StrFormat(
      "claims: %d calls (%.2f per task), %.1f tasks per non-empty claim, %.2f ms per claim "
      "round trip",
      c.claim_calls(),
      static_cast<double>(c.claim_calls()) / static_cast<double>(std::max<std::int64_t>(tasks, 1)),
      c.mean_claim_size(), c.mean_claim_ms());
}

absl::Status start_one(const Client& client, StartCall call, const std::string& slug,
                       std::int64_t i) {
  if (call == StartCall::kStartRun) return client.start_run(slug, nlohmann::json(i)).status();
  return client.start_flow(slug, nlohmann::json(i)).status();
}

// `producers` threads start `runs` runs in all with `call` (each start its own transaction);
// returns when every run is started (throws BenchError when a start fails).
void start_runs(const Client& client, StartCall call, const std::string& slug, int producers,
                std::int64_t runs) {
  std::mutex error_mu;
  std::string error;
  {
    std::vector<std::jthread> threads;
    for (int p = 0; p < producers; ++p) {
      threads.emplace_back([&, p] {
        for (std::int64_t i = p; i < runs; i += producers) {
          absl::Status started = start_one(client, call, slug, i);
          if (!started.ok()) {
            std::lock_guard<std::mutex> lock(error_mu);
            error = std::string(started.message());
            return;
          }
        }
      });
    }
  }
  if (!error.empty()) throw BenchError("c: starting a run failed: " + error);
}

// Runs started per second by start_runs with no worker running, full starts and lean starts
// (`runs` each). They alternate in 10 rounds, so both see the run tables at the same sizes and
// the server in the same moods (commit latency on a VM drifts within seconds).
struct StartRates {
  double full = 0;
  double lean = 0;
  std::string full_cpu, lean_cpu;  // CPU per start of each kind's rounds (CpuMeter::per_task)
};
StartRates start_rates(const Client& client, const CpuMeter& meter, const std::string& slug,
                       int producers, std::int64_t runs) {
  constexpr int kRounds = 10;
  CpuTally tallies[2];
  for (int round = 0; round < kRounds; ++round) {
    const std::int64_t chunk = runs / kRounds + (round < runs % kRounds ? 1 : 0);
    for (StartCall call : {StartCall::kStartFlow, StartCall::kStartRun}) {
      const CpuSample cpu0 = meter.sample();
      const Clock::time_point t0 = Clock::now();
      start_runs(client, call, slug, producers, chunk);
      const double seconds = seconds_between(t0, Clock::now());
      tallies[call == StartCall::kStartFlow ? 0 : 1].add(seconds, chunk, cpu0, meter.sample());
    }
  }
  return {tallies[0].rate(), tallies[1].rate(), tallies[0].per_unit(), tallies[1].per_unit()};
}

}  // namespace

namespace {

// Runs a worker with `config` (whose metrics feed `counter`) on `flow` until `runs` more of the
// flow's runs completed or the timeout passed, calling `produce` once the worker started. The
// clock and the CPU window start before the worker starts (`from_worker_start`) or right
// before `produce`. Everything of a Throughput but its note.
Throughput drain(const BenchContext& ctx, Db& db, const FlowDefinition& flow, WorkerConfig config,
                 TaskCounter& counter, std::int64_t runs, bool from_worker_start,
                 const std::function<void()>& produce) {
  const std::int64_t completed_before = completed_runs(db, flow.slug);
  counter.reset(runs);
  const CpuMeter meter(db);
  Throughput out{.tasks = runs};
  Clock::time_point t0;
  auto start_clock = [&] {
    out.cpu0 = meter.sample();
    t0 = Clock::now();
  };
  std::optional<Clock::time_point> done;
  {
    if (from_worker_start) start_clock();
    EdgeWorker worker = start_worker(flow, std::move(config));
    if (!from_worker_start) start_clock();
    produce();
    done = counter.wait(ctx.timeout);
    out.cpu1 = meter.sample();
    out.backends = backend_cpu_by_connection(db, seconds_between(t0, Clock::now()));
    worker.stop();
    (void)worker.wait();
  }
  out.completed = completed_runs(db, flow.slug) - completed_before;
  out.finished = done && out.completed == runs;
  if (out.finished) out.seconds = seconds_between(t0, *done);
  return out;
}

}  // namespace

Throughput drain_backlog(const BenchContext& ctx, Db& db, const FlowDefinition& flow,
                         std::int64_t runs, int report_batch, bool analyze, int tenants) {
  const auto fill_start = Clock::now();
  if (tenants > 0) {
    prefill_tenant_runs(db, flow.slug, runs, tenants);
  } else {
    prefill_runs(db, flow.slug, runs, "1");
  }
  if (analyze) db.exec("analyze pgflow.runs, pgflow.step_states, pgflow.step_tasks");
  const double fill_seconds = seconds_between(fill_start, Clock::now());

  TaskCounter counter;
  Throughput out = drain(ctx, db, flow, worker_config(ctx, report_batch, &counter), counter, runs,
                         /*from_worker_start=*/true, [] {});
  if (!out.finished) {
    out.note = absl::StrFormat("%d of %d runs completed within %d s", out.completed, runs,
                               ctx.timeout.count() / 1000);
    return out;
  }
  out.note = absl::StrFormat(
      "%d runs in %.2f s (timed from EdgeWorker::start; pre-fill took %.2f s, not timed%s); %s; "
      "%s",
      runs, out.seconds, fill_seconds, analyze ? ", then ANALYZE" : "", claim_note(counter, runs),
      CpuMeter::per_task(out.cpu0, out.cpu1, runs, out.seconds));
  return out;
}

void add_throughput_row(BenchContext& ctx, const std::string& id, const std::string& name,
                        const Throughput& t) {
  if (!t.finished) {
    ctx.report.add({.id = id,
                    .name = name + " (DID NOT FINISH)",
                    .value = 0,
                    .unit = "tasks/s",
                    .note = t.note});
    return;
  }
  ctx.report.add({.id = id,
                  .name = name,
                  .value = t.rate(),
                  .unit = "tasks/s",
                  .throughput = true,
                  .note = t.note,
                  .server_us = t.server_us()});
  if (!t.backends.empty())
    ctx.report.add({.id = "", .name = "", .value = 0, .unit = "", .note = t.backends});
}

void run_backlog(BenchContext& ctx) {
  const std::int64_t runs = ctx.flags.scaled("backlog");
  double with_batching = 0;
  // b1 and b2 drain a backlog that arrived in a burst (the planner's statistics of the run
  // tables predate it, as in production until autovacuum analyzes them); b3 repeats b1 after
  // an ANALYZE, to show how much of the claim cost is due to plans chosen on stale statistics.
  struct Config {
    const char* id;
    int report_batch;
    bool analyze;
  };
  for (const Config& config :
       {Config{"b1", 64, false}, Config{"b2", 1, false}, Config{"b3", 64, true}}) {
    const int report_batch = config.report_batch;
    const bool analyze = config.analyze;
    progress(absl::StrFormat("b: 1-step flow, backlog of %d runs, report_batch_size %d%s", runs,
                             report_batch, analyze ? ", ANALYZE after the pre-fill" : ""));
    Db db = Db::open(ctx.url);
    const FlowDefinition def = one_step_flow(unique_slug("bench_backlog"));
    compile_flow(db, def);
    const Throughput drained = drain_backlog(ctx, db, def, runs, report_batch, analyze);
    const std::string id = config.id;
    if (id == "b1") with_batching = drained.rate();
    add_throughput_row(ctx, id,
                       absl::StrFormat("worker, 1-step backlog, report_batch_size %d%s",
                                       report_batch, analyze ? ", fresh stats" : ""),
                       drained);
    drop_flow(db, def.slug);
    vacuum_run_tables(db);
  }
  if (ctx.raw_rate > 0 && with_batching > 0) {
    const double ratio = with_batching / ctx.raw_rate;
    ctx.report.target(
        {.target = "worker throughput, 1-step flow draining a backlog >= 50% of the raw PGMQ cycle",
         .met = ratio >= 0.5,
         .detail = absl::StrFormat("%.0f%% (%.0f vs %.0f tasks/s, report_batch_size 64)",
                                   ratio * 100, with_batching, ctx.raw_rate)});
  } else {
    ctx.report.target(
        {.target = "worker throughput, 1-step flow draining a backlog >= 50% of the raw PGMQ cycle",
         .met = std::nullopt,
         .detail = "needs sections a and b"});
  }
}

// Appends libpq's `options` to a connection URL (for settings of the sessions it opens).
std::string with_session_setting(const std::string& url, const std::string& setting) {
  return url + (url.find('?') == std::string::npos ? "?" : "&") + "options=-c%20" + setting;
}

Throughput produce_and_drain(const BenchContext& ctx, const std::string& url, Db& db,
                             const FlowDefinition& flow, StartCall call, std::int64_t runs,
                             int producers) {
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = url, .max_connections = producers});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  TaskCounter counter;
  WorkerConfig config = worker_config(ctx, 64, &counter);
  config.connection_string = url;
  Clock::time_point first_start, produced;
  Throughput out = drain(ctx, db, flow, std::move(config), counter, runs,
                         /*from_worker_start=*/false, [&] {
                           first_start = Clock::now();
                           // A failure throws; the worker drains.
                           start_runs(*client, call, flow.slug, producers, runs);
                           produced = Clock::now();
                         });
  if (!out.finished) {
    out.note = absl::StrFormat("%d of %d runs completed", out.completed, runs);
    return out;
  }
  out.note = absl::StrFormat(
      "%d runs: first start_flow to last completion %.2f s; the producers alone started %.0f "
      "runs/s; %s; %s (incl. producers)",
      runs, out.seconds, static_cast<double>(runs) / seconds_between(first_start, produced),
      claim_note(counter, runs), CpuMeter::per_task(out.cpu0, out.cpu1, runs, out.seconds));
  return out;
}

namespace {

// One end-to-end measurement on a fresh 1-step flow (produce_and_drain), and its row.
void end_to_end(BenchContext& ctx, const std::string& url, StartCall call, const std::string& id,
                const std::string& what, std::int64_t runs, int producers) {
  Db db = Db::open(ctx.url);
  const FlowDefinition def = one_step_flow(unique_slug("bench_e2e"));
  compile_flow(db, def);
  add_throughput_row(
      ctx, id, absl::StrFormat("end to end, %d producers + worker, 1-step flow%s", producers, what),
      produce_and_drain(ctx, url, db, def, call, runs, producers));
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

}  // namespace

void run_producers(BenchContext& ctx) {
  const std::int64_t runs = ctx.flags.scaled("e2e_runs");
  const int producers = static_cast<int>(std::max<std::int64_t>(1, ctx.flags.integer("producers")));
  progress(absl::StrFormat(
      "c: producers alone (1 and 2 threads), then %d producers start %d runs of a 1-step "
      "flow while the worker runs (events on, then off)",
      producers, runs));
  {
    // c2/c3: producers alone (no worker), one thread against two, on the same flow.
    Db db = Db::open(ctx.url);
    const FlowDefinition def = one_step_flow(unique_slug("bench_start"));
    compile_flow(db, def);
    absl::StatusOr<Client> client =
        Client::connect({.connection_string = ctx.url, .max_connections = 2});
    if (!client.ok())
      throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
    const std::int64_t start_runs = std::max<std::int64_t>(runs / 3, 20);
    const CpuMeter meter(db);
    const StartRates one_thread = start_rates(*client, meter, def.slug, 1, start_runs);
    const StartRates two_threads = start_rates(*client, meter, def.slug, 2, start_runs);
    const double one = one_thread.full, lean_one = one_thread.lean;
    const double two = two_threads.full, lean_two = two_threads.lean;
    ctx.report.add({.id = "c2",
                    .name = "producers alone: Client::start_flow, 1 / 2 threads",
                    .value = two,
                    .unit = "runs/s",
                    .note = absl::StrFormat(
                        "%.0f runs/s with 1 thread, %.0f with 2 (%d runs each, no worker "
                        "running; each start its own transaction); 1 thread: %s; 2 threads: %s",
                        one, two, start_runs, one_thread.full_cpu, two_threads.full_cpu)});
    ctx.report.add(
        {.id = "c3", .name = "producers 2 vs 1 (target >= 1.8)", .value = two / one, .unit = "x"});
    ctx.report.add({.id = "c5",
                    .name = "producers alone: Client::start_run (lean), 1 / 2 threads",
                    .value = lean_two,
                    .unit = "runs/s",
                    .note = absl::StrFormat(
                        "%.0f runs/s with 1 thread, %.0f with 2 (as c2, returning only the run "
                        "id); 1 thread: %s; 2 threads: %s",
                        lean_one, lean_two, one_thread.lean_cpu, two_threads.lean_cpu)});
    ctx.report.add({.id = "c6",
                    .name = "lean vs full start, 1 thread (c5 / c2)",
                    .value = lean_one / one,
                    .unit = "x"});
    // c8: c3 with the producers' sessions not notifying pgflow_events (worker wake-ups stay),
    // to show how much of the producers' scaling the notify-at-commit lock takes.
    absl::StatusOr<Client> quiet = Client::connect(
        {.connection_string = with_session_setting(ctx.url, "pgflow.notify_events%3Doff"),
         .max_connections = 2});
    if (!quiet.ok()) throw BenchError(absl::StrCat("Client::connect: ", quiet.status().message()));
    const StartRates quiet_one = start_rates(*quiet, meter, def.slug, 1, start_runs);
    const StartRates quiet_two = start_rates(*quiet, meter, def.slug, 2, start_runs);
    ctx.report.add({.id = "c8",
                    .name = "producers 2 vs 1, pgflow.notify_events off",
                    .value = quiet_two.full / quiet_one.full,
                    .unit = "x",
                    .note = absl::StrFormat(
                        "Client::start_flow %.0f -> %.0f runs/s; 1 thread: %s; 2 threads: %s",
                        quiet_one.full, quiet_two.full, quiet_one.full_cpu, quiet_two.full_cpu)});
    drop_flow(db, def.slug);
    vacuum_run_tables(db);
  }
  end_to_end(ctx, ctx.url, StartCall::kStartFlow, "c1", "", runs, producers);
  end_to_end(ctx, with_session_setting(ctx.url, "pgflow.notify_events%3Doff"),
             StartCall::kStartFlow, "c4", ", pgflow.notify_events off", runs, producers);
  end_to_end(ctx, ctx.url, StartCall::kStartRun, "c7", ", lean starts (Client::start_run)", runs,
             producers);
}

void run_dag(BenchContext& ctx) {
  const std::int64_t runs = ctx.flags.scaled("dag_runs");
  const std::int64_t map_size = ctx.flags.integer("dag_map");
  const std::int64_t tasks = runs * (map_size + 4);
  progress(absl::StrFormat("d: 5-step DAG with a %d-element map, backlog of %d runs (%d tasks)",
                           map_size, runs, tasks));
  Db db = Db::open(ctx.url);
  const FlowDefinition def = renamed(dag_flow(), unique_slug("bench_dag"));
  compile_flow(db, def);
  prefill_runs(db, def.slug, runs, std::to_string(map_size));
  TaskCounter counter;
  counter.reset(tasks);
  const CpuMeter meter(db);
  const CpuSample cpu0 = meter.sample();
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> done;
  CpuSample cpu1;
  std::string backends;
  {
    EdgeWorker worker = start_worker(def, worker_config(ctx, 64, &counter));
    done = counter.wait(ctx.timeout);
    cpu1 = meter.sample();
    backends = backend_cpu_by_connection(db, seconds_between(t0, Clock::now()));
    worker.stop();
    (void)worker.wait();
  }
  const std::int64_t finished = completed_runs(db, def.slug);
  if (!done || finished != runs) {
    ctx.report.add({.id = "d1",
                    .name = "5-step DAG (DID NOT FINISH)",
                    .value = 0,
                    .unit = "tasks/s",
                    .note = absl::StrFormat("%d of %d runs completed", finished, runs)});
  } else {
    const double secs = seconds_between(t0, *done);
    ctx.report.add({.id = "d1",
                    .name = absl::StrFormat("5-step DAG with a %d-element map: tasks", map_size),
                    .value = static_cast<double>(tasks) / secs,
                    .unit = "tasks/s",
                    .throughput = true,
                    .note = absl::StrFormat("%d runs x %d tasks in %.2f s; %s; %s", runs,
                                            map_size + 4, secs, claim_note(counter, tasks),
                                            CpuMeter::per_task(cpu0, cpu1, tasks, secs)),
                    .server_us = CpuMeter::server_us(cpu0, cpu1, tasks)});
    ctx.report.add({.id = "d2",
                    .name = absl::StrFormat("5-step DAG with a %d-element map: runs", map_size),
                    .value = static_cast<double>(runs) / secs,
                    .unit = "runs/s",
                    .note = backends});
  }
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

void run_map_scaling(BenchContext& ctx) {
  const std::int64_t small = ctx.flags.scaled("map_small", 10);
  const std::int64_t large = ctx.flags.scaled("map_large", 10);
  const int repeats =
      static_cast<int>(std::max<std::int64_t>(1, ctx.flags.integer("map_small_repeats")));
  progress(absl::StrFormat("f: root map of %d (x%d) and %d elements, hot worker", small, repeats,
                           large));
  Db db = Db::open(ctx.url);
  const FlowDefinition def = renamed(map_flow(), unique_slug("bench_map"));
  compile_flow(db, def);
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = ctx.url, .max_connections = 1});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));

  TaskCounter counter;
  EdgeWorker worker = start_worker(def, worker_config(ctx, 64, &counter));
  const CpuMeter meter(db);
  struct Timing {
    double total_s = 0;
    double start_flow_ms = 0;
    std::string claims;
  };
  // Times one run of `n` elements from start_flow to its last task's completion.
  auto one_run = [&](std::int64_t n) -> std::optional<Timing> {
    std::vector<int> input(static_cast<size_t>(n));
    std::iota(input.begin(), input.end(), 1);
    const nlohmann::json json = input;
    counter.reset(n);
    const CpuSample cpu0 = meter.sample();
    const auto t0 = Clock::now();
    absl::StatusOr<RunState> run = client->start_flow(def.slug, json);
    const auto started = Clock::now();
    if (!run.ok()) throw BenchError(absl::StrCat("f: start_flow: ", run.status().message()));
    std::optional<Clock::time_point> done = counter.wait(ctx.timeout);
    const CpuSample cpu1 = meter.sample();
    if (!done) return std::nullopt;
    if (db.scalar("select status from pgflow.runs where run_id = $1::uuid", {run->run_id}) !=
        "completed") {
      return std::nullopt;
    }
    return Timing{seconds_between(t0, *done), millis_between(t0, started),
                  claim_note(counter, n) + "; " +
                      CpuMeter::per_task(cpu0, cpu1, n, seconds_between(t0, *done))};
  };
  (void)one_run(20);  // warm-up
  std::vector<double> small_per_element;
  std::vector<std::string> small_runs;
  std::optional<Timing> small_timing, large_timing;
  for (int i = 0; i < repeats; ++i) {
    small_timing = one_run(small);
    if (!small_timing) break;
    small_per_element.push_back(small_timing->total_s * 1e6 / static_cast<double>(small));
    small_runs.push_back(absl::StrFormat("%.2f s", small_timing->total_s));
  }
  if (small_timing) large_timing = one_run(large);
  worker.stop();
  (void)worker.wait();

  if (!small_timing || !large_timing) {
    ctx.report.add(
        {.id = "f1", .name = "map scaling (DID NOT FINISH)", .value = 0, .unit = "us/elem"});
    ctx.report.target({.target = "10k-element map: time per element within 1.5x of a 1k map",
                       .met = false,
                       .detail = "a map run did not finish within the timeout"});
  } else {
    const double small_us = median(small_per_element);
    const double large_us = large_timing->total_s * 1e6 / static_cast<double>(large);
    ctx.report.add({.id = "f1",
                    .name = absl::StrFormat("root map, %d elements: time per element", small),
                    .value = small_us,
                    .unit = "us/elem",
                    .note = absl::StrFormat("median of %d runs (%s); start_flow call %.1f ms; %s",
                                            repeats, absl::StrJoin(small_runs, ", "),
                                            small_timing->start_flow_ms, small_timing->claims)});
    ctx.report.add({.id = "f2",
                    .name = absl::StrFormat("root map, %d elements: time per element", large),
                    .value = large_us,
                    .unit = "us/elem",
                    .note = absl::StrFormat("%.2f s in total; start_flow call %.1f ms; %s",
                                            large_timing->total_s, large_timing->start_flow_ms,
                                            large_timing->claims)});
    ctx.report.add({.id = "f3",
                    .name = absl::StrFormat("root map, %d elements: tasks", large),
                    .value = static_cast<double>(large) / large_timing->total_s,
                    .unit = "tasks/s",
                    .throughput = true});
    const double ratio = large_us / small_us;
    ctx.report.add({.id = "f4",
                    .name = "map per-element time ratio large/small (target <= 1.5)",
                    .value = ratio,
                    .unit = "x"});
    ctx.report.target(
        {.target = "10k-element map: time per element within 1.5x of a 1k map",
         .met = ratio <= 1.5,
         .detail = absl::StrFormat("%.2fx (%.0f us/element at %d, %.0f us/element at %d)", ratio,
                                   large_us, large, small_us, small)});
  }
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

}  // namespace pgflow::bench
