// s. Starts against the substrate: Client::start_flow of a 1-step flow against raw single sends
// (a1s, a2s: each connection sends one task-shaped message per autocommit transaction with
// pgmq.send, the least a start must do), with 1 and with 2 threads. Each start measurement sits
// between two raw ones, so a slow spell of the machine shows instead of skewing the ratios. Then
// a sustained start run, to see whether the rate holds while the run tables grow.
//
// Producers alone, as in c2: no worker drains the flow, so the run tables and the queue grow by
// every start, as they do while producers outpace their workers.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "load/support.h"
#include "pgflow/client.h"

namespace pgflow::bench {
namespace {

// Rate and CPU per unit between two marks of a loop.
struct Window {
  double rate = 0;
  std::optional<double> server_us;
  std::string cpu;  // CpuMeter::per_task
};

Window window(const LoopMark& from, const LoopMark& to, std::string_view unit) {
  const std::int64_t n = to.done - from.done;
  return {.rate = units_per_second(from, to),
          .server_us = CpuMeter::server_us(from.cpu, to.cpu, n),
          .cpu = CpuMeter::per_task(from.cpu, to.cpu, n, seconds_between(from.at, to.at), unit)};
}

// `conns` connections each sending one message per transaction to `queue`.
Window raw_sends(const BenchContext& ctx, const CpuMeter& meter, const std::string& queue,
                 int conns, double seconds) {
  const std::vector<LoopMark> marks =
      run_loop(meter, conns, seconds, seconds,
               [&](int, const std::atomic<bool>& stop, std::atomic<std::int64_t>& sent) {
                 Db db = Db::open(ctx.url, "pgflow-bench-raw");
                 while (!stop.load()) {
                   db.exec(kSendTaskMessage, {queue});
                   ++sent;
                 }
               });
  return window(marks.front(), marks.back(), "send");
}

// `threads` threads calling Client::start_flow (each start its own transaction), marked every
// `mark_every` seconds.
std::vector<LoopMark> starts(const Client& client, const CpuMeter& meter, const std::string& slug,
                             int threads, double seconds, double mark_every) {
  return run_loop(
      meter, threads, seconds, mark_every,
      [&](int thread, const std::atomic<bool>& stop, std::atomic<std::int64_t>& started) {
        for (std::int64_t i = thread; !stop.load(); i += threads) {
          absl::Status s = client.start_flow(slug, nlohmann::json(i)).status();
          if (!s.ok()) throw BenchError(absl::StrCat("s: start_flow: ", s.message()));
          ++started;
        }
      });
}

Client connect(const std::string& url, int connections) {
  absl::StatusOr<Client> client =
      Client::connect({.connection_string = url, .max_connections = connections});
  if (!client.ok()) throw BenchError(absl::StrCat("Client::connect: ", client.status().message()));
  return *std::move(client);
}

// a<n>s and s<n>: raw sends, starts, raw sends with `threads` connections/threads; the starts
// are compared with the mean of the raw measurements around them.
void starts_between_sends(BenchContext& ctx, const CpuMeter& meter, const Client& client,
                          const std::string& slug, const std::string& queue, int threads) {
  const double seconds = ctx.flags.number("raw_seconds");
  progress(absl::StrFormat(
      "s: raw single sends, Client::start_flow, raw single sends; %d connection(s), %.0f s each",
      threads, seconds));
  const Window before = raw_sends(ctx, meter, queue, threads, seconds);
  const std::vector<LoopMark> marks = starts(client, meter, slug, threads, seconds, seconds);
  const Window start = window(marks.front(), marks.back(), "start");
  const Window after = raw_sends(ctx, meter, queue, threads, seconds);

  const std::string threads_text = threads == 1 ? "1 thread" : absl::StrCat(threads, " threads");
  const double send_rate = (before.rate + after.rate) / 2;
  std::optional<double> send_us;
  if (before.server_us && after.server_us) send_us = (*before.server_us + *after.server_us) / 2;
  const std::string raw_id = absl::StrFormat("a%ds", threads);
  ctx.report.add({.id = raw_id,
                  .name = absl::StrFormat(
                      "raw single sends, pgmq.send of 1 message per transaction, %d conn", threads),
                  .value = send_rate,
                  .unit = "sends/s",
                  .note = absl::StrFormat("mean of %.0f sends/s before s%d and %.0f after; "
                                          "before: %s; after: %s",
                                          before.rate, threads, after.rate, before.cpu, after.cpu),
                  .server_us = send_us});
  ctx.report.add({.id = absl::StrFormat("s%d", threads),
                  .name = absl::StrFormat("Client::start_flow, 1-step flow, %s, between %s runs",
                                          threads_text, raw_id),
                  .value = start.rate,
                  .unit = "runs/s",
                  .note = absl::StrFormat("%.2f of %s's rate; no worker running; %s",
                                          start.rate / send_rate, raw_id, start.cpu),
                  .server_us = start.server_us});

  const std::string who = "start, " + threads_text;
  if (start.server_us && send_us) {
    ctx.report.verdict(multiple_verdict(
        absl::StrFormat("%s: server CPU per Client::start_flow over %s's per send", who, raw_id),
        *start.server_us, *send_us, "us", 3, /*at_most=*/true));
  }
  ctx.report.verdict(multiple_verdict(
      absl::StrFormat("%s: Client::start_flow rate over %s's send rate", who, raw_id), start.rate,
      send_rate, "per s", 1.0 / 3, /*at_most=*/false));
}

// s3, s4: 2 threads start runs for --sustained_seconds; the first and the last 10 s compared.
void sustained_starts(BenchContext& ctx, const CpuMeter& meter, const Client& client,
                      const std::string& slug) {
  const double seconds = ctx.flags.number("sustained_seconds");
  progress(absl::StrFormat("s: sustained Client::start_flow, 2 threads, %.0f s", seconds));
  const std::vector<LoopMark> marks = starts(client, meter, slug, 2, seconds, 1);
  const int intervals = static_cast<int>(marks.size()) - 1;  // of a second each
  const int span = std::min(10, intervals);
  const Window first = window(marks[0], marks[static_cast<size_t>(span)], "start");
  const Window last = window(marks[static_cast<size_t>(intervals - span)], marks.back(), "start");
  std::vector<std::string> per_span;
  for (int i = 0; i + span <= intervals; i += span) {
    per_span.push_back(absl::StrFormat(
        "%.0f",
        units_per_second(marks[static_cast<size_t>(i)], marks[static_cast<size_t>(i + span)])));
  }
  const std::string name =
      absl::StrFormat("sustained Client::start_flow, 2 threads, %.0f s: ", seconds);
  ctx.report.add({.id = "s3",
                  .name = absl::StrFormat("%sfirst %d s", name, span),
                  .value = first.rate,
                  .unit = "runs/s",
                  .note = first.cpu,
                  .server_us = first.server_us});
  ctx.report.add(
      {.id = "s4",
       .name = absl::StrFormat("%slast %d s", name, span),
       .value = last.rate,
       .unit = "runs/s",
       .note = absl::StrFormat(
           "%.2f of the first %d s; runs/s per %d s: %s; %d runs in all on a fresh flow, no "
           "worker (the run tables grow by each start); %s",
           last.rate / first.rate, span, span, absl::StrJoin(per_span, ", "),
           marks.back().done - marks.front().done, last.cpu),
       .server_us = last.server_us});
  const double ratio = last.rate / first.rate;
  ctx.report.verdict(
      {.what = absl::StrFormat("sustained start, 2 threads, %.0f s: last %d s over the first %d s",
                               seconds, span, span),
       .met = std::abs(ratio - 1) <= 0.10,
       .figure = absl::StrFormat("%.0f vs %.0f runs/s = %.2fx", last.rate, first.rate, ratio),
       .target = "within 10%"});
}

}  // namespace

void run_starts(BenchContext& ctx) {
  Db db = Db::open(ctx.url);
  const CpuMeter meter(db);
  const Client client = connect(ctx.url, 2);
  const std::string queue = unique_slug("bench_sends");
  db.exec("select pgmq.create($1)", {queue});
  {
    const FlowDefinition def = one_step_flow(unique_slug("bench_starts"));
    compile_flow(db, def);
    for (int threads : {1, 2}) starts_between_sends(ctx, meter, client, def.slug, queue, threads);
    drop_flow(db, def.slug);
    vacuum_run_tables(db);
  }
  db.exec("select pgmq.drop_queue($1)", {queue});
  const FlowDefinition def = one_step_flow(unique_slug("bench_sustained"));
  compile_flow(db, def);
  sustained_starts(ctx, meter, client, def.slug);
  drop_flow(db, def.slug);
  vacuum_run_tables(db);
}

}  // namespace pgflow::bench
