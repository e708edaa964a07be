// i. Cancellation latency: from Client::cancel_run to the moment the last running handler of
// the cancelled run sees its stop token fire.
//
// Each round starts a run of a root map with as many elements as the worker runs at once
// (--concurrency), waits until every handler is running (each blocks until its token fires),
// then calls cancel_run. A std::stop_callback in each handler records when its token fired
// (the callback runs in the thread that fires the token, so the time is exact); same process,
// same clock. The clock starts just before the cancel_run call, so the figure includes the
// call's own round trip and commit (reported separately).
#include <algorithm>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "load/support.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"

namespace pgflow::bench {
namespace {

// What the handlers of the current round record.
struct Round {
  std::mutex mu;
  std::condition_variable changed;
  int running = 0;
  int returned = 0;
  std::vector<Clock::time_point> stopped_at;
};

}  // namespace

void run_cancellation(BenchContext& ctx) {
  const int elements = ctx.concurrency;
  const int warmup = 3;
  const int measured = static_cast<int>(ctx.flags.scaled("cancel_runs", 5));
  progress(absl::StrFormat(
      "i: cancel_run -> last running handler's stop token, %d runs (+%d warm-up) of %d "
      "running handlers each",
      measured, warmup, elements));

  auto round = std::make_shared<Round>();
  const auto flow =
      Flow<"benchCancel", std::vector<int>>().map<"hold">([round](int x, Context& task) {
        std::stop_callback record(task.stop_token(), [&round] {
          const auto now = Clock::now();
          std::lock_guard<std::mutex> lock(round->mu);
          round->stopped_at.push_back(now);
        });
        {
          std::lock_guard<std::mutex> lock(round->mu);
          ++round->running;
        }
        round->changed.notify_all();
        std::mutex wait_mu;
        std::condition_variable_any until_stopped;
        std::unique_lock<std::mutex> wait_lock(wait_mu);
        until_stopped.wait(wait_lock, task.stop_token(), [] { return false; });
        {
          std::lock_guard<std::mutex> lock(round->mu);
          ++round->returned;
        }
        round->changed.notify_all();
        return x;
      });

  Db db = Db::open(ctx.url);
  const FlowDefinition def = renamed(flow, unique_slug("bench_cancel"));
  compile_flow(db, def);
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = ctx.url, .max_connections = 1});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  EdgeWorker worker = start_worker(def, worker_config(ctx, 64, nullptr));

  std::vector<double> last_handler, every_handler, cancel_calls;
  for (int i = 0; i < warmup + measured; ++i) {
    {
      std::lock_guard<std::mutex> lock(round->mu);
      round->running = round->returned = 0;
      round->stopped_at.clear();
    }
    absl::StatusOr<std::string> run_id =
        client->start_run(def.slug, nlohmann::json(std::vector<int>(elements, i)));
    if (!run_id.ok()) throw BenchError(absl::StrCat("i: start_run: ", run_id.status().message()));
    {
      std::unique_lock<std::mutex> lock(round->mu);
      if (!round->changed.wait_for(lock, std::chrono::seconds(30),
                                   [&] { return round->running == elements; })) {
        throw BenchError("i: the handlers did not all start within 30 s");
      }
    }
    const auto before = Clock::now();
    absl::StatusOr<bool> cancelled = client->cancel_run(*run_id);
    const auto returned = Clock::now();
    if (!cancelled.ok() || !*cancelled) throw BenchError("i: cancel_run did not cancel the run");
    std::unique_lock<std::mutex> lock(round->mu);
    if (!round->changed.wait_for(lock, std::chrono::seconds(30),
                                 [&] { return round->returned == elements; })) {
      throw BenchError("i: the handlers did not all stop within 30 s of the cancellation");
    }
    if (i < warmup) continue;
    cancel_calls.push_back(millis_between(before, returned));
    for (const Clock::time_point t : round->stopped_at)
      every_handler.push_back(millis_between(before, t));
    last_handler.push_back(millis_between(
        before, *std::max_element(round->stopped_at.begin(), round->stopped_at.end())));
  }
  worker.stop();
  (void)worker.wait();
  drop_flow(db, def.slug);
  vacuum_run_tables(db);

  const std::string note = absl::StrFormat(
      "%d runs x %d running handlers; every handler: p50 %.2f ms, p99 %.2f ms; the cancel_run call "
      "itself "
      "(round trip and commit): p50 %.2f ms",
      last_handler.size(), elements, percentile(every_handler, 50), percentile(every_handler, 99),
      percentile(cancel_calls, 50));
  ctx.report.add({.id = "i1",
                  .name = "cancel_run -> last running handler's stop token, p50",
                  .value = percentile(last_handler, 50),
                  .unit = "ms",
                  .note = note});
  ctx.report.add({.id = "i2",
                  .name = "cancel_run -> last running handler's stop token, p99",
                  .value = percentile(last_handler, 99),
                  .unit = "ms"});
}

}  // namespace pgflow::bench
