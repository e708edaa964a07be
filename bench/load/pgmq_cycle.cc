// a. The raw PGMQ task cycle: each connection loops send_batch(N) -> read(N) -> archive(ids),
// each call its own (autocommit) transaction, N = the worker's batch size. This is the
// reference every worker throughput is compared with: what the queue substrate alone does
// on this server for the same message flow (one insert, one read, one archive per task).
#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "internal/strings.h"
#include "load/support.h"

namespace pgflow::bench {

// A message shaped like a pgflow task message (queue $1).
#define PGFLOW_BENCH_TASK_MESSAGE                                                        \
  "jsonb_build_object('flow_slug', $1::text, 'run_id', gen_random_uuid(), 'step_slug', " \
  "'work', 'task_index', 0)"
const char kSendTaskMessages[] =
    "select count(*) from pgmq.send_batch($1::text, array(select " PGFLOW_BENCH_TASK_MESSAGE
    " from generate_series(1, $2::int)))";
const char kSendTaskMessage[] = "select pgmq.send($1::text, " PGFLOW_BENCH_TASK_MESSAGE ")";
#undef PGFLOW_BENCH_TASK_MESSAGE

namespace {

constexpr char kRead[] = "select msg_id from pgmq.read($1::text, 30, $2::int)";
constexpr char kArchive[] = "select count(*) from pgmq.archive($1::text, $2::bigint[])";

struct RawResult {
  double rate = 0;
  std::string cpu;
  std::optional<double> server_us;
};

RawResult measure(const BenchContext& ctx, int conns, double seconds) {
  Db admin = Db::open(ctx.url);
  const CpuMeter meter(admin);
  const std::string queue = unique_slug("bench_raw");
  admin.exec("select pgmq.create($1)", {queue});
  std::vector<LoopMark> marks;
  try {
    marks = run_loop(meter, conns, seconds, seconds,
                     [&](int, const std::atomic<bool>& stop, std::atomic<std::int64_t>& archived) {
                       Db db = Db::open(ctx.url, "pgflow-bench-raw");
                       const std::string n = std::to_string(ctx.batch);
                       while (!stop.load()) {
                         db.exec(kSendTaskMessages, {queue, n});
                         pg::Result got = db.exec(kRead, {queue, n});
                         // legitimately empty under concurrency (pgmq.md 6)
                         if (got.rows() == 0) continue;
                         std::string ids = "{";
                         for (int i = 0; i < got.rows(); ++i)
                           absl::StrAppend(&ids, i ? "," : "", internal::absl_view(got.text(i, 0)));
                         ids += "}";
                         archived += db.integer(kArchive, {queue, ids});
                       }
                     });
  } catch (const BenchError& e) {
    admin.exec("select pgmq.drop_queue($1)", {queue});
    throw BenchError(std::string("raw PGMQ cycle: ") + e.what());
  }
  admin.exec("select pgmq.drop_queue($1)", {queue});
  const LoopMark& from = marks.front();
  const LoopMark& to = marks.back();
  const std::int64_t archived = to.done - from.done;
  return {units_per_second(from, to),
          CpuMeter::per_task(from.cpu, to.cpu, archived, seconds_between(from.at, to.at)),
          CpuMeter::server_us(from.cpu, to.cpu, archived)};
}

}  // namespace

void run_pgmq_cycle(BenchContext& ctx) {
  const double seconds = ctx.flags.number("raw_seconds");
  double best = 0;
  int best_conns = 0;
  for (absl::string_view c : absl::StrSplit(ctx.flags.text("raw_conns"), ',')) {
    int conns = 0;
    if (!absl::SimpleAtoi(c, &conns) || conns < 1) throw BenchError("--raw_conns: bad count");
    progress(absl::StrFormat("a: raw PGMQ cycle, batch %d, %d connection(s), %.0f s", ctx.batch,
                             conns, seconds));
    const RawResult raw = measure(ctx, conns, seconds);
    const double rate = raw.rate;
    ctx.report.add({.id = absl::StrCat("a", conns),
                    .name = absl::StrFormat("raw PGMQ cycle send/read/archive, batch %d, %d conn",
                                            ctx.batch, conns),
                    .value = rate,
                    .unit = "tasks/s",
                    .throughput = true,
                    .note = raw.cpu,
                    .server_us = raw.server_us});
    if (rate > best) {
      best = rate;
      best_conns = conns;
      ctx.raw_server_us = raw.server_us;
    }
  }
  ctx.raw_rate = best;
  ctx.report.note(absl::StrFormat(
      "ratios are against the best raw PGMQ cycle rate: %.0f tasks/s (batch %d, %d connections); "
      "each raw call is its own transaction (3 commits per batch), like start_flow/claim/complete",
      best, ctx.batch, best_conns));
}

}  // namespace pgflow::bench
