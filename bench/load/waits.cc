// w. Waits and signals (docs/waiting.md): what 10,000 runs waiting at once cost, how fast a
// signal reaches the step after the wait, and how late the timers of sleeps fire.
//
// w1: 10,000 runs of a flow whose root step waits for a signal, started while a worker runs:
// the worker holds none of them (no task started, no message queued) and each waiting run costs
// the growth of pgflow's run tables and their indexes (runs, step_states, step_tasks) divided by
// the runs. w2/w3: Client::send_signal to a waiting run -> the handler of the step after it
// starts (same process, same clock; the clock starts before the call, so its round trip and
// commit count). w4: sleeps of 1 s; lateness = when the step completed - when it was due, as
// the database recorded them; the worker fires the timers at every heartbeat (1 s here).
#include <algorithm>
#include <chrono>
#include <map>
#include <memory>
#include <mutex>
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

// When the handler after the wait started, by the number each run carries.
struct Starts {
  std::mutex mu;
  std::map<int, Clock::time_point> at;
};

// The size of pgflow's run tables with their indexes and TOAST, in bytes.
std::int64_t run_table_bytes(Db& db) {
  return db.integer(
      "select sum(pg_total_relation_size(c))::bigint from unnest(array['pgflow.runs', "
      "'pgflow.step_states', 'pgflow.step_tasks']::regclass[]) c");
}

}  // namespace

void run_waits(BenchContext& ctx) {
  const int waiting_runs = static_cast<int>(ctx.flags.scaled("wait_runs", 100));
  const int signalled = std::min(200, waiting_runs);
  progress(absl::StrFormat(
      "w: %d runs waiting for a signal, %d signals -> next step, sleeps' timer lateness",
      waiting_runs, signalled));

  auto starts = std::make_shared<Starts>();
  const auto flow = Flow<"benchWaits", int>().signal<"approve", int>().step<"after">(
      pgflow::after<"approve">, [starts](int n) {
        const auto now = Clock::now();
        std::lock_guard<std::mutex> lock(starts->mu);
        starts->at.emplace(n, now);
        return n;
      });
  Db db = Db::open(ctx.url);
  const FlowDefinition def = renamed(flow, unique_slug("bench_waits"));
  compile_flow(db, def);
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = ctx.url, .max_connections = 1});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  WorkerConfig config = worker_config(ctx, 64, nullptr);
  config.heartbeat_interval = std::chrono::seconds(1);
  EdgeWorker worker = start_worker(def, config);

  vacuum_run_tables(db);
  const std::int64_t bytes_before = run_table_bytes(db);
  prefill_runs(db, def.slug, waiting_runs, "0");
  const std::int64_t waiting = db.integer(
      "select count(*) from pgflow.step_tasks where flow_slug = $1 and status = 'waiting'",
      {def.slug});
  const std::int64_t held = db.integer(
      "select count(*) from pgflow.step_tasks where flow_slug = $1 and status in ('queued', "
      "'started')",
      {def.slug});
  const double bytes_each =
      static_cast<double>(run_table_bytes(db) - bytes_before) / std::max(1, waiting_runs);

  // Signals to the first runs, one at a time: the payload is the run's number.
  const std::vector<std::string> run_ids = [&] {
    std::vector<std::string> ids;
    pg::Result r = db.exec(
        "select run_id::text from pgflow.runs where flow_slug = $1 order by run_id limit $2::int",
        {def.slug, std::to_string(signalled)});
    for (int i = 0; i < r.rows(); ++i) ids.emplace_back(r.text(i, 0));
    return ids;
  }();
  std::vector<double> latency;
  for (int i = 0; i < static_cast<int>(run_ids.size()); ++i) {
    const int n = i + 1;
    const auto before = Clock::now();
    absl::StatusOr<SignalOutcome> sent = client->send_signal(run_ids[i], "approve", "bench", n);
    if (!sent.ok() || *sent != SignalOutcome::kDelivered)
      throw BenchError("w: send_signal did not deliver");
    for (int tries = 0;; ++tries) {
      {
        std::lock_guard<std::mutex> lock(starts->mu);
        if (auto it = starts->at.find(n); it != starts->at.end()) {
          latency.push_back(millis_between(before, it->second));
          break;
        }
      }
      if (tries > 30000) throw BenchError("w: the step after a signal did not start within 30 s");
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  worker.stop();
  (void)worker.wait();
  drop_flow(db, def.slug);

  // Sleeps: runs of a root sleep of 1 s, started together; the worker's heartbeat fires them.
  const auto sleeper =
      Flow<"benchSleeps", int>().sleep<"nap">(pgflow::sleep_for(std::chrono::seconds(1)));
  const FlowDefinition sleep_def = renamed(sleeper, unique_slug("bench_sleeps"));
  compile_flow(db, sleep_def);
  EdgeWorker timer_worker = start_worker(sleep_def, config);
  const int sleeps = signalled;
  prefill_runs(db, sleep_def.slug, sleeps, "0");
  for (int tries = 0; db.integer("select count(*) from pgflow.runs where flow_slug = $1 and "
                                 "status = 'completed'",
                                 {sleep_def.slug}) < sleeps;
       ++tries) {
    if (tries > 600) throw BenchError("w: the sleeps did not all end within 60 s");
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::vector<double> lateness;
  pg::Result late = db.exec(
      "select extract(epoch from ss.completed_at - (ss.started_at + interval '1 second')) * 1000 "
      "from pgflow.step_states ss where ss.flow_slug = $1",
      {sleep_def.slug});
  for (int i = 0; i < late.rows(); ++i) lateness.push_back(std::stod(std::string(late.text(i, 0))));
  timer_worker.stop();
  (void)timer_worker.wait();
  drop_flow(db, sleep_def.slug);
  vacuum_run_tables(db);

  ctx.report.add({.id = "w1",
                  .name = "a run waiting for a signal: bytes in the run tables",
                  .value = bytes_each,
                  .unit = "bytes",
                  .note = absl::StrFormat("%d runs waiting at once: %d tasks waiting, %d queued "
                                          "or started (a worker ran all along)",
                                          waiting_runs, waiting, held)});
  ctx.report.add(
      {.id = "w2",
       .name = "send_signal -> next step's handler starts, p50",
       .value = percentile(latency, 50),
       .unit = "ms",
       .note = absl::StrFormat("%d signals, one at a time, LISTEN worker", latency.size())});
  ctx.report.add({.id = "w3",
                  .name = "send_signal -> next step's handler starts, p99",
                  .value = percentile(latency, 99),
                  .unit = "ms"});
  ctx.report.add({.id = "w4",
                  .name = "a sleep's timer fires late by, p99 (heartbeat 1 s)",
                  .value = percentile(lateness, 99),
                  .unit = "ms",
                  .note = absl::StrFormat("%d sleeps of 1 s; p50 %.0f ms", lateness.size(),
                                          percentile(lateness, 50))});
  ctx.report.verdict({.what = "w1 runs waiting hold no worker task or message",
                      .met = held == 0 && waiting == waiting_runs,
                      .figure = absl::StrFormat("%d waiting, %d queued or started", waiting, held),
                      .target = "all waiting, none queued"});
  ctx.report.verdict({.what = "w1 bytes per waiting run (#34: <= 2048)",
                      .met = bytes_each <= 2048,
                      .figure = absl::StrFormat("%.0f bytes", bytes_each),
                      .target = "<= 2048 bytes"});
  ctx.report.verdict({.what = "w4 timer lateness p99 within one heartbeat (1 s) + 0.5 s",
                      .met = percentile(lateness, 99) <= 1500,
                      .figure = absl::StrFormat("%.0f ms", percentile(lateness, 99)),
                      .target = "<= 1500 ms"});
}

}  // namespace pgflow::bench
