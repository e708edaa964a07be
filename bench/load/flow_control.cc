// l. Concurrency limits and priorities (#31): what a limit costs, whether it holds, and
// whether a priority overtakes a backlog.
//
// l1/l2/l2b/l2k/l2kb: the b1 drain (a 1-step backlog, report_batch_size 64; runs of 100
// tenants) without a limit, with a step limit equal to the worker's max_concurrent, with one of
// 3x max_concurrent, and with those limits shared by a concurrency key on the tenant (100
// values), in alternating rounds on fresh flows; the throughput ratio and the server CPU per
// task of each, summed over the rounds.
// l3: a step limit of 5 served by three workers (max_concurrent 10 each, 30 slots), draining a
// backlog of tasks whose handler takes 2 ms: the most handlers running at once (an in-process
// counter every handler updates) and the most tasks started at once (SQL sampling, every
// 5 ms, on its own connection). The three workers are EdgeWorkers of this process, each with
// its own connections; killing one mid-drain needs separate processes: the integration test
// WorkerProcessTest.AConcurrencyLimitHoldsAcrossWorkerProcessesAndAKill does that.
// l4: a priority-10 run started while 2,000 priority-0 runs wait under a step limit: how many
// tasks start between its start's commit and its first task (the ones admitted already).
// l5: a noisy tenant's 5,000 queued tasks (5 ms handlers) drain under a step limit equal to
// max_concurrent shared by a key on the tenant; a quiet tenant starts 20 runs one after another
// while it drains: commit -> handler start of each, against the same probes on the idle flow
// (l5i), and the first probe of the same backlog without the key (l5n: it waits its turn).
#include <algorithm>
#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "load/support.h"
#include "nlohmann/json.hpp"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "worker/config.h"

namespace pgflow::bench {
namespace {

// Handlers running now, and the most seen at once.
struct Running {
  std::atomic<int> now{0};
  std::atomic<int> most{0};
};

FlowDefinition limited_flow(std::string slug, std::shared_ptr<Running> running, int limit) {
  return renamed(Flow<"benchLimited", int>().step<"work">(
                     {.concurrency_limit = runtime(limit)},
                     [running](int x) {
                       const int now = ++running->now;
                       int most = running->most.load();
                       while (now > most && !running->most.compare_exchange_weak(most, now)) {
                       }
                       std::this_thread::sleep_for(std::chrono::milliseconds(2));
                       --running->now;
                       return x;
                     }),
                 std::move(slug));
}

// One trivial step over a JSON input (the runs carry a tenant), like one_step_flow.
FlowDefinition tenant_flow(std::string slug) {
  return renamed(
      Flow<"benchTenants", nlohmann::json>().step<"work">([](const nlohmann::json&) { return 1; }),
      std::move(slug));
}

void run_throughput_cost(BenchContext& ctx) {
  const std::int64_t runs = ctx.flags.scaled("backlog");
  const int rounds = static_cast<int>(ctx.flags.integer("limit_rounds"));
  // No limit; a limit equal to the worker's max_concurrent (no slack: a slot frees only when
  // a result commits, and only then is the next task visible); a limit of 3x max_concurrent
  // (the worker is the bottleneck, admission runs ahead of it).
  struct Config {
    const char* id;
    int limit;  // 0: none
    bool keyed;
  };
  constexpr int kTenants = 100;
  const std::vector<Config> configs = {{"l1", 0, false},
                                       {"l2", ctx.concurrency, false},
                                       {"l2b", 3 * ctx.concurrency, false},
                                       {"l2k", ctx.concurrency, true},
                                       {"l2kb", 3 * ctx.concurrency, true}};
  std::vector<CpuTally> tallies(configs.size());
  std::vector<std::vector<double>> rates(configs.size());
  bool finished = true;
  for (int round = 0; round < rounds && finished; ++round) {
    for (std::size_t i = 0; i < configs.size() && finished; ++i) {
      const int limit = configs[i].limit;
      progress(absl::StrFormat("l: round %d/%d, 1-step backlog of %d runs, %s%s", round + 1, rounds,
                               runs, limit ? absl::StrFormat("step limit %d", limit) : "no limit",
                               configs[i].keyed ? ", key on 100 tenants" : ""));
      Db db = Db::open(ctx.url);
      FlowDefinition def = tenant_flow(unique_slug("bench_limit"));
      if (limit) def.steps[0].options.concurrency_limit = limit;
      if (configs[i].keyed) def.steps[0].options.concurrency_key = {.path = "tenant"};
      compile_flow(db, def);
      const Throughput t = drain_backlog(ctx, db, def, runs, 64, false, kTenants);
      finished = t.finished;
      if (t.finished) {
        tallies[i].add(t.seconds, t.tasks, t.cpu0, t.cpu1);
        rates[i].push_back(t.rate());
      }
      drop_flow(db, def.slug);
      vacuum_run_tables(db);
    }
  }
  if (!finished) {
    ctx.report.add(
        {.id = "l2", .name = "concurrency limits: a drain did not finish", .unit = "tasks/s"});
    ctx.report.verdict({.what = "l2 throughput over l1's (target of #31: >= 0.85)",
                        .met = false,
                        .figure = "a drain did not finish",
                        .target = ">= 0.85x"});
    return;
  }
  const std::string what = absl::StrFormat("%d rounds of %d runs each, alternating", rounds, runs);
  for (std::size_t i = 0; i < configs.size(); ++i) {
    ctx.report.add(
        {.id = configs[i].id,
         .name = configs[i].limit
                     ? absl::StrFormat("worker, 1-step backlog, step limit %d (max_concurrent "
                                       "%d)%s",
                                       configs[i].limit, ctx.concurrency,
                                       configs[i].keyed ? ", keyed on 100 tenants" : "")
                     : std::string("worker, 1-step backlog of 100 tenants, no limit"),
         .value = tallies[i].rate(),
         .unit = "tasks/s",
         .throughput = true,
         .note = absl::StrFormat("%s; median round %.0f tasks/s; %s", what, median(rates[i]),
                                 tallies[i].per_unit()),
         .server_us = tallies[i].server_us()});
  }
  for (std::size_t i = 1; i < configs.size(); ++i) {
    if (tallies[i].server_us() && tallies[0].server_us()) {
      ctx.report.verdict(multiple_verdict(
          absl::StrFormat("%s server CPU per task over l1's (a limit's cost to the drain; "
                          "the pre-filled starts are not metered)",
                          configs[i].id),
          *tallies[i].server_us(), *tallies[0].server_us(), "us", 1.25, /*at_most=*/true));
    }
    ctx.report.verdict(multiple_verdict(
        absl::StrFormat("%s throughput over l1's (target of #31: >= 0.85)", configs[i].id),
        tallies[i].rate(), tallies[0].rate(), "tasks/s", 0.85, /*at_most=*/false));
  }
}

// Start order of handlers: low-priority runs count up; the high-priority run records where
// it fell.
struct StartOrder {
  std::atomic<int> low{0};
  std::atomic<int> high_at{-1};
  std::atomic<std::int64_t> high_started_us{0};
};

FlowDefinition priority_flow(std::string slug, std::shared_ptr<StartOrder> order, int limit) {
  return renamed(Flow<"benchPriority", int>().step<"work">(
                     {.concurrency_limit = runtime(limit)},
                     [order](int x) {
                       if (x < 0) {
                         order->high_at = order->low.load();
                         order->high_started_us =
                             std::chrono::duration_cast<std::chrono::microseconds>(
                                 Clock::now().time_since_epoch())
                                 .count();
                       } else {
                         ++order->low;
                       }
                       std::this_thread::sleep_for(std::chrono::milliseconds(2));
                       return x;
                     }),
                 std::move(slug));
}

// A backlog of low-priority (0) runs drains under a step limit equal to the worker's
// max_concurrent; a high-priority (10) run started (and prioritized in the same transaction)
// while 2,000 wait must start before more than `limit` other tasks start after its commit: the
// ones admitted already, at most one claim cycle of them. (Tasks that start while its start's
// transaction is open are noted, not counted: the run does not exist for a claim yet.)
void run_priority(BenchContext& ctx) {
  const int limit = ctx.concurrency;
  const std::int64_t backlog = ctx.flags.scaled("priority_backlog");
  progress(
      absl::StrFormat("l: priority, a backlog of %d runs under step limit %d", backlog, limit));
  Db db = Db::open(ctx.url);
  auto order = std::make_shared<StartOrder>();
  const FlowDefinition def = priority_flow(unique_slug("bench_priority"), order, limit);
  compile_flow(db, def);
  prefill_runs(db, def.slug, backlog + 100, "1");
  absl::StatusOr<Client> client = Client::connect({.connection_string = ctx.url});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  TaskCounter counter;
  counter.reset(backlog + 101);
  EdgeWorker worker = start_worker(def, worker_config(ctx, 64, &counter));
  const auto warm_until = Clock::now() + ctx.timeout;
  while (order->low.load() < 100 && Clock::now() < warm_until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  const int low_before_start = order->low.load();
  Clock::time_point committed;
  absl::Status started = client->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<std::string> run = tx.start_run_by_slug(def.slug, -1);
    if (!run.ok()) return run.status();
    return tx.set_run_priority(*run, 10);
  });
  committed = Clock::now();
  const int low_after_commit = order->low.load();
  if (!started.ok()) throw BenchError(absl::StrCat("l: priority start: ", started.message()));
  const auto done = counter.wait(ctx.timeout);
  worker.stop();
  (void)worker.wait();
  const int high_at = order->high_at.load();
  const bool measured = done.has_value() && high_at >= 0;
  const int overtaken_by = measured ? high_at - low_after_commit : -1;
  const double latency_ms =
      measured ? static_cast<double>(order->high_started_us.load() -
                                     std::chrono::duration_cast<std::chrono::microseconds>(
                                         committed.time_since_epoch())
                                         .count()) /
                     1000.0
               : 0;
  ctx.report.add({.id = "l4",
                  .name = absl::StrFormat("priority 10 run vs a backlog of %d priority-0 runs, "
                                          "step limit %d: tasks started after its commit, "
                                          "before it",
                                          backlog, limit),
                  .value = static_cast<double>(overtaken_by),
                  .unit = "tasks",
                  .note = measured
                              ? absl::StrFormat("its first task started %.1f ms after its "
                                                "start committed (2 ms handlers); %d of "
                                                "the tasks started during its start's "
                                                "transaction (not counted)",
                                                latency_ms, low_after_commit - low_before_start)
                              : std::string("did not finish")});
  ctx.report.verdict(
      {.what = absl::StrFormat("l4 tasks started between a priority-10 run's commit and its "
                               "first task's, with %d waiting (within one claim cycle: the %d "
                               "admitted)",
                               backlog, limit),
       .met = measured && overtaken_by <= limit,
       .figure = measured ? absl::StrFormat("%d", overtaken_by) : "did not finish",
       .target = absl::StrFormat("<= %d", limit),
       .primary = true});
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

void run_limit_holds(BenchContext& ctx) {
  constexpr int kLimit = 5;
  constexpr int kWorkers = 3;
  const std::int64_t tasks = ctx.flags.scaled("limit_tasks");
  progress(absl::StrFormat("l: step limit %d, %d workers x max_concurrent 10, %d tasks", kLimit,
                           kWorkers, tasks));
  Db db = Db::open(ctx.url);
  auto running = std::make_shared<Running>();
  const FlowDefinition def = limited_flow(unique_slug("bench_limit_holds"), running, kLimit);
  compile_flow(db, def);
  prefill_runs(db, def.slug, tasks, "1");

  std::atomic<bool> stop{false};
  std::atomic<int> most_started{0};
  std::int64_t samples = 0;
  std::thread sampler([&] {
    Db sdb = Db::open(ctx.url);
    while (!stop.load()) {
      const int started = std::stoi(sdb.scalar(
          "select count(*) from pgflow.step_tasks where flow_slug = $1 and status = 'started'",
          {def.slug}));
      most_started = std::max(most_started.load(), started);
      ++samples;
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  TaskCounter counter;
  counter.reset(tasks);
  const auto t0 = Clock::now();
  std::optional<Clock::time_point> done;
  {
    std::vector<EdgeWorker> workers;
    for (int i = 0; i < kWorkers; ++i) {
      WorkerConfig config = worker_config(ctx, 64, &counter);
      config.max_concurrent = 10;
      workers.push_back(start_worker(def, std::move(config)));
    }
    done = counter.wait(ctx.timeout);
    for (EdgeWorker& w : workers) w.stop();
    for (EdgeWorker& w : workers) (void)w.wait();
  }
  stop = true;
  sampler.join();
  const bool finished = done.has_value();
  const double seconds = finished ? seconds_between(t0, *done) : 0;
  ctx.report.add(
      {.id = "l3",
       .name = absl::StrFormat("step limit %d, %d workers x 10 slots: most handlers at once",
                               kLimit, kWorkers),
       .value = static_cast<double>(running->most.load()),
       .unit = "handlers",
       .note = absl::StrFormat(
           "%d tasks (2 ms handlers)%s; most tasks started at once in %d SQL samples: %d; "
           "%.0f tasks/s (at most %d / 2 ms = %.0f)",
           tasks, finished ? "" : " (DID NOT FINISH)", samples, most_started.load(),
           finished ? static_cast<double>(tasks) / seconds : 0.0, kLimit, kLimit * 500.0)});
  const bool held = finished && running->most.load() <= kLimit && most_started.load() <= kLimit;
  ctx.report.verdict(
      {.what = "l3 most handlers (and started tasks) at once under a step limit of 5",
       .met = held,
       .figure = absl::StrFormat("%d handlers, %d started%s", running->most.load(),
                                 most_started.load(), finished ? "" : ", did not finish"),
       .target = "<= 5",
       .primary = true});
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

// When each quiet probe's handler started (microseconds since the epoch; 0: not yet).
struct ProbeStarts {
  explicit ProbeStarts(int n) : at(static_cast<std::size_t>(n)) {}
  std::vector<std::atomic<std::int64_t>> at;
};

std::int64_t now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now().time_since_epoch())
      .count();
}

// A step limited to `limit`, keyed on the tenant when `keyed`: a probe's handler records when
// it started; the others (the noisy tenant's) take 5 ms.
FlowDefinition probed_flow(std::string slug, std::shared_ptr<ProbeStarts> probes, int limit,
                           bool keyed) {
  FlowDefinition def = renamed(
      Flow<"benchNoisy", nlohmann::json>().step<"work">([probes](const nlohmann::json& input) {
        const auto probe = input.find("probe");
        if (probe != input.end()) {
          probes->at[probe->get<std::size_t>()] = now_us();
        } else {
          std::this_thread::sleep_for(std::chrono::milliseconds(5));
        }
        return 0;
      }),
      std::move(slug));
  def.steps[0].options.concurrency_limit = limit;
  if (keyed) def.steps[0].options.concurrency_key = ConcurrencyKeyValues{.path = "tenant"};
  return def;
}

// The quiet tenant's probes, one after another (10 ms apart): commit -> handler start, in ms;
// empty when one did not start within the timeout.
std::vector<double> quiet_probes(const BenchContext& ctx, Client& client, const std::string& slug,
                                 ProbeStarts& probes, int count) {
  std::vector<double> latencies;
  for (int i = 0; i < count; ++i) {
    absl::StatusOr<std::string> run =
        client.start_run_by_slug(slug, nlohmann::json{{"tenant", "quiet"}, {"probe", i}});
    const std::int64_t committed = now_us();
    if (!run.ok()) throw BenchError(absl::StrCat("l5: probe start: ", run.status().message()));
    const auto give_up = Clock::now() + ctx.timeout;
    while (probes.at[static_cast<std::size_t>(i)].load() == 0 && Clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
    const std::int64_t started = probes.at[static_cast<std::size_t>(i)].load();
    if (started == 0) return {};
    latencies.push_back(static_cast<double>(started - committed) / 1000.0);
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return latencies;
}

struct ProbeRun {
  std::vector<double> latencies;  // empty: did not finish
  std::int64_t backlog_left = 0;  // the noisy tenant's tasks still queued after the last probe
};

// Probes a fresh flow, after `backlog` noisy runs were queued and a worker began draining them.
ProbeRun probe_beside_backlog(BenchContext& ctx, Client& client, bool keyed, std::int64_t backlog,
                              int count) {
  Db db = Db::open(ctx.url);
  auto probes = std::make_shared<ProbeStarts>(count);
  const FlowDefinition def =
      probed_flow(unique_slug("bench_tenants"), probes, ctx.concurrency, keyed);
  compile_flow(db, def);
  if (backlog > 0) prefill_runs(db, def.slug, backlog, R"({"tenant": "noisy"})");
  TaskCounter counter;
  counter.reset(backlog + count);
  ProbeRun out;
  {
    EdgeWorker worker = start_worker(def, worker_config(ctx, 64, &counter));
    const auto warm_until = Clock::now() + std::chrono::milliseconds(2000);
    while (backlog > 0 && counter.completed() < 50 && Clock::now() < warm_until) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    out.latencies = quiet_probes(ctx, client, def.slug, *probes, count);
    out.backlog_left = std::stoll(db.scalar(
        "select count(*) from pgflow.step_tasks where flow_slug = $1 and status = 'queued'",
        {def.slug}));
    worker.stop();
    (void)worker.wait();
  }
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
  return out;
}

void run_noisy_tenant(BenchContext& ctx) {
  const std::int64_t backlog = ctx.flags.scaled("noisy_backlog");
  constexpr int kProbes = 20;
  absl::StatusOr<Client> client = Client::connect({.connection_string = ctx.url});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  progress(absl::StrFormat("l: %d quiet probes on an idle keyed flow", kProbes));
  const ProbeRun idle = probe_beside_backlog(ctx, *client, true, 0, kProbes);
  progress(absl::StrFormat("l: %d quiet probes beside a noisy tenant's %d tasks, keyed", kProbes,
                           backlog));
  const ProbeRun keyed = probe_beside_backlog(ctx, *client, true, backlog, kProbes);
  progress(absl::StrFormat("l: 1 quiet probe beside a noisy tenant's %d tasks, no key", backlog));
  const ProbeRun unkeyed = probe_beside_backlog(ctx, *client, false, backlog, 1);

  const double poll_ms =
      static_cast<double>(internal::idle_poll_interval(worker_config(ctx, 64, nullptr)).count());
  auto add = [&](const char* id, const std::string& name, const ProbeRun& r) {
    const bool done = !r.latencies.empty();
    ctx.report.add(
        {.id = id,
         .name = name,
         .value = done ? percentile(r.latencies, 99) : 0,
         .unit = "ms p99",
         .note =
             done ? absl::StrFormat("p50 %.1f ms over %d probes; noisy tasks still queued "
                                    "after the last: %d",
                                    percentile(r.latencies, 50), r.latencies.size(), r.backlog_left)
                  : std::string("did not finish")});
  };
  add("l5i",
      absl::StrFormat("quiet tenant, commit -> handler start, idle keyed flow (step limit %d)",
                      ctx.concurrency),
      idle);
  add("l5", absl::StrFormat("quiet tenant beside a noisy tenant's %d queued tasks, keyed", backlog),
      keyed);
  add("l5n", absl::StrFormat("the same without a key (one probe: it waits for the backlog)"),
      unkeyed);
  const bool measured =
      !idle.latencies.empty() && !keyed.latencies.empty() && keyed.backlog_left > 0;
  const double idle_p99 = measured ? percentile(idle.latencies, 99) : 0;
  const double keyed_p99 = measured ? percentile(keyed.latencies, 99) : 0;
  ctx.report.verdict(
      {.what = absl::StrFormat("l5 quiet tenant's p99 beside a noisy tenant's %d tasks "
                               "(fair keys; target of #31: <= 2x idle p99 + one poll interval)",
                               backlog),
       .met = measured && keyed_p99 <= 2 * idle_p99 + poll_ms,
       .figure = measured ? absl::StrFormat("%.1f ms (idle %.1f ms, poll interval %.0f ms)",
                                            keyed_p99, idle_p99, poll_ms)
                          : std::string("not measured (a probe did not start, or the backlog "
                                        "drained before the last probe)"),
       .target = absl::StrFormat("<= %.1f ms", 2 * idle_p99 + poll_ms),
       .primary = true});
}

}  // namespace

void run_flow_control(BenchContext& ctx) {
  run_throughput_cost(ctx);
  run_limit_holds(ctx);
  run_priority(ctx);
  run_noisy_tenant(ctx);
}

}  // namespace pgflow::bench
