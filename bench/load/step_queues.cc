// h. Step queues: how long a small, independent step waits while a 10,000-element map drains,
// with one queue for the whole flow and with one queue per step (with_step_queues).
//
// The flow: `items` (root, makes an array of n elements, only when the input says `big`), the
// map `bulk` over it, and `ping` (root, records when its handler starts). A big run (n =
// 10,000) fills the map; while its workers drain it, probe runs are started 100 ms apart and
// the time from start_flow's commit to their `ping` handler's start is measured, as in section
// e. A probe skips `items` by its condition, so ping is its run's only task: otherwise the
// completion of the probe's own `items` would hold the run's row while ping is claimed, which
// is not what this section measures. Plain flow:
// one worker serves every step from the flow's single queue, so a probe's ping waits behind the
// map's messages. Step queues: one worker per step, so ping has its own queue and worker.
// The idle latency of the step-queued flow (probes with no map running) is measured first, in
// the same run.
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <numeric>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "load/support.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"

namespace pgflow::bench {
namespace {

struct FairInput {
  bool big = false;  // items runs only for the big run
  int n = 0;         // elements of the map
  int probe = -1;    // which probe this run is (-1: the big run)
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(FairInput, big, n, probe)

// When each probe's ping handler started.
struct PingStarts {
  std::mutex mu;
  std::condition_variable cv;
  std::vector<std::optional<Clock::time_point>> at;
};

auto fair_flow(std::shared_ptr<PingStarts> starts, std::chrono::milliseconds work) {
  return Flow<"benchFair", FairInput>()
      .array<"items">(
          when({{"big", true}}), when_unmet_skip_cascade,
          [](const FairInput& in) { return std::vector<int>(static_cast<std::size_t>(in.n), 1); })
      .map<"bulk">(over<"items">,
                   [work](int x) {
                     if (work.count() > 0) std::this_thread::sleep_for(work);  // the element's work
                     return x;
                   })
      .step<"ping">([starts](const FairInput& in) {
        const auto now = Clock::now();
        {
          std::lock_guard<std::mutex> lock(starts->mu);
          if (in.probe >= 0 && static_cast<std::size_t>(in.probe) < starts->at.size()) {
            starts->at[static_cast<std::size_t>(in.probe)] = now;
          }
        }
        starts->cv.notify_all();
        return in.probe;
      });
}

struct Latencies {
  std::vector<double> ms;
  int missed = 0;
  double claim_ms = 0;  // mean read+claim round trip of the worker serving ping meanwhile
};

// Starts `count` probe runs numbered from `first`, `gap` apart (whether or not earlier probes'
// handlers started: the probes sample the whole backlog), then waits up to `wait_limit` for
// their ping handlers and measures commit -> ping handler start for each.
Latencies probe(Client& client, const std::string& slug, PingStarts& starts, int first, int count,
                std::chrono::milliseconds gap, std::chrono::milliseconds wait_limit) {
  std::vector<Clock::time_point> committed;
  for (int i = first; i < first + count; ++i) {
    absl::StatusOr<RunState> run = client.start_flow(slug, nlohmann::json(FairInput{false, 0, i}));
    committed.push_back(Clock::now());
    if (!run.ok()) throw BenchError(absl::StrCat("h: start_flow: ", run.status().message()));
    std::this_thread::sleep_for(gap);
  }
  Latencies out;
  std::unique_lock<std::mutex> lock(starts.mu);
  const auto all_started = [&] {
    for (int i = first; i < first + count; ++i) {
      if (!starts.at[static_cast<std::size_t>(i)]) return false;
    }
    return true;
  };
  starts.cv.wait_for(lock, wait_limit, all_started);
  for (int i = first; i < first + count; ++i) {
    if (const auto& started = starts.at[static_cast<std::size_t>(i)]) {
      out.ms.push_back(millis_between(committed[static_cast<std::size_t>(i - first)], *started));
    } else {
      ++out.missed;
    }
  }
  return out;
}

std::string describe(const Latencies& l) {
  if (l.ms.empty()) return "no probe's handler started";
  return absl::StrFormat(
      "%d probes: p50 %.2f ms, p99 %.2f ms, max %.2f ms%s%s", l.ms.size(), percentile(l.ms, 50),
      percentile(l.ms, 99), *std::max_element(l.ms.begin(), l.ms.end()),
      l.claim_ms > 0 ? absl::StrFormat("; its worker's claims took %.2f ms", l.claim_ms) : "",
      l.missed ? absl::StrFormat("; %d probes never started within the limit", l.missed) : "");
}

}  // namespace

void run_step_queues(BenchContext& ctx) {
  const int elements = static_cast<int>(ctx.flags.scaled("fair_map", 100));
  const int probes = static_cast<int>(ctx.flags.integer("fair_probes"));
  const auto gap = std::chrono::milliseconds(100);
  auto starts = std::make_shared<PingStarts>();
  starts->at.resize(static_cast<std::size_t>(3 * probes));
  const auto work = std::chrono::milliseconds(ctx.flags.integer("fair_work_ms"));
  const auto typed = fair_flow(starts, work);
  Db db = Db::open(ctx.url);
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = ctx.url, .max_connections = 1});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));

  // Runs the big run on `def` with `workers` started, probing from `first`; returns the probes.
  auto during_backlog = [&](const FlowDefinition& def, const std::vector<std::string>& steps,
                            int first) {
    compile_flow(db, def);
    std::vector<EdgeWorker> workers;
    TaskCounter ping_claims;  // the claims of the worker that serves ping
    for (const std::string& step : steps) {
      WorkerConfig config =
          worker_config(ctx, 64, step == "ping" || step.empty() ? &ping_claims : nullptr);
      config.step = step;
      workers.push_back(start_worker(def, config));
    }
    Latencies idle;
    if (first == 0) {
      progress(absl::StrFormat("h: %d idle probes of the step-queued flow", probes));
      idle = probe(*client, def.slug, *starts, 0, probes, gap, std::chrono::seconds(30));
      first = probes;
    }
    absl::StatusOr<RunState> big =
        client->start_flow(def.slug, nlohmann::json(FairInput{true, elements, -1}));
    if (!big.ok()) throw BenchError(absl::StrCat("h: start_flow: ", big.status().message()));
    // Probe once the map's tasks exist, i.e. while they drain.
    const auto deadline = Clock::now() + ctx.timeout;
    while (
        db.scalar(
            "select count(*) from pgflow.step_tasks where run_id = $1::uuid and step_slug = 'bulk'",
            {big->run_id}) != std::to_string(elements)) {
      if (Clock::now() > deadline) throw BenchError("h: the big run's map never started");
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (std::getenv("FAIR_ANALYZE"))
      db.exec("analyze pgflow.step_tasks, pgflow.runs, pgflow.step_states");
    const std::string queue_depth = db.scalar(
        "select count(*) from pgflow.step_tasks where run_id = $1::uuid and status = 'queued'",
        {big->run_id});
    progress(absl::StrFormat(
        "h: %d probes of %s while %s map tasks wait", probes,
        def.queue_mode == QueueMode::kStep ? "the step-queued flow" : "the plain flow",
        queue_depth));
    ping_claims.reset(0);
    Latencies busy = probe(*client, def.slug, *starts, first, probes, gap, ctx.timeout);
    busy.claim_ms = ping_claims.mean_claim_ms();
    const std::string left = db.scalar(
        "select count(*) from pgflow.step_tasks where run_id = $1::uuid and status <> 'completed'",
        {big->run_id});
    for (EdgeWorker& w : workers) w.stop();
    for (EdgeWorker& w : workers) (void)w.wait();
    drop_flow(db, def.slug);
    vacuum_run_tables(db);
    return std::tuple(idle, busy, queue_depth, left);
  };

  const FlowDefinition routed = renamed(with_step_queues(typed), unique_slug("bench_fair_step"));
  auto [idle, step_busy, step_depth, step_left] =
      during_backlog(routed, {"items", "bulk", "ping"}, 0);
  const FlowDefinition plain = renamed(typed, unique_slug("bench_fair_plain"));
  auto [unused, plain_busy, plain_depth, plain_left] = during_backlog(plain, {""}, 2 * probes);

  if (idle.ms.empty() || step_busy.ms.empty()) {
    ctx.report.target(
        {.target = "step queues: a small step's p50 latency during a 10k map backlog <= 2x idle",
         .met = false,
         .detail = "no probe started"});
    return;
  }
  const double idle_p50 = percentile(idle.ms, 50);
  ctx.report.add(
      {.id = "h1",
       .name = "step-queued flow, idle: commit -> independent step start, p50",
       .value = idle_p50,
       .unit = "ms",
       .note = absl::StrFormat("%s; map elements take %d ms of handler time (--fair_work_ms)",
                               describe(idle), work.count())});
  ctx.report.add({.id = "h2",
                  .name = "step-queued flow, map backlog: commit -> independent step start, p50",
                  .value = percentile(step_busy.ms, 50),
                  .unit = "ms",
                  .note = absl::StrFormat(
                      "%s; %s map tasks queued when probing began, %s unfinished when it ended",
                      describe(step_busy), step_depth, step_left)});
  if (!plain_busy.ms.empty()) {
    ctx.report.add({.id = "h3",
                    .name = "plain flow, map backlog: commit -> independent step start, p50",
                    .value = percentile(plain_busy.ms, 50),
                    .unit = "ms",
                    .note = absl::StrFormat(
                        "%s; %s map tasks queued when probing began, %s unfinished when it ended",
                        describe(plain_busy), plain_depth, plain_left)});
  }
  const double ratio = percentile(step_busy.ms, 50) / idle_p50;
  ctx.report.target(
      {.target = "step queues: a small step's p50 latency during a 10k map backlog <= 2x idle",
       .met = ratio <= 2.0 && step_busy.missed == 0,
       .detail = absl::StrFormat("%.2fx (%.2f ms vs %.2f ms idle); the plain flow: %s", ratio,
                                 percentile(step_busy.ms, 50), idle_p50,
                                 plain_busy.ms.empty()
                                     ? std::string("no probe started")
                                     : absl::StrFormat("%.2f ms", percentile(plain_busy.ms, 50)))});
}

}  // namespace pgflow::bench
