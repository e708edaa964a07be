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
namespace {

// A message shaped like a pgflow task message.
constexpr char kSend[] =
    "select count(*) from pgmq.send_batch($1::text, array("
    "select jsonb_build_object('flow_slug', $1::text, 'run_id', gen_random_uuid(), "
    "'step_slug', 'work', 'task_index', 0) from generate_series(1, $2::int)))";
constexpr char kRead[] = "select msg_id from pgmq.read($1::text, 30, $2::int)";
constexpr char kArchive[] = "select count(*) from pgmq.archive($1::text, $2::bigint[])";

struct RawResult {
  double rate = 0;
  std::string cpu;
};

RawResult measure(const BenchContext& ctx, int conns, double seconds) {
  Db admin = Db::open(ctx.url);
  const CpuMeter meter(admin);
  const std::string queue = unique_slug("bench_raw");
  admin.exec("select pgmq.create($1)", {queue});

  std::atomic<bool> stop{false};
  std::atomic<std::int64_t> archived{0};
  std::mutex error_mu;
  std::string error;
  std::vector<std::jthread> threads;
  for (int t = 0; t < conns; ++t) {
    threads.emplace_back([&] {
      try {
        Db db = Db::open(ctx.url, "pgflow-bench-raw");
        const std::string n = std::to_string(ctx.batch);
        while (!stop.load()) {
          db.exec(kSend, {queue, n});
          pg::Result got = db.exec(kRead, {queue, n});
          if (got.rows() == 0) continue;  // legitimately empty under concurrency (pgmq.md 6)
          std::string ids = "{";
          for (int i = 0; i < got.rows(); ++i)
            absl::StrAppend(&ids, i ? "," : "", internal::absl_view(got.text(i, 0)));
          ids += "}";
          archived += db.integer(kArchive, {queue, ids});
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> lock(error_mu);
        error = e.what();
        stop = true;
      }
    });
  }
  // Half a second of warm-up, then the measured window.
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  const auto t0 = Clock::now();
  const std::int64_t n0 = archived.load();
  const CpuSample cpu0 = meter.sample();
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
  const auto t1 = Clock::now();
  const std::int64_t n1 = archived.load();
  const CpuSample cpu1 = meter.sample();
  stop = true;
  threads.clear();
  admin.exec("select pgmq.drop_queue($1)", {queue});
  if (!error.empty()) throw BenchError("raw PGMQ cycle: " + error);
  return {static_cast<double>(n1 - n0) / seconds_between(t0, t1),
          CpuMeter::per_task(cpu0, cpu1, n1 - n0, seconds_between(t0, t1))};
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
                    .note = raw.cpu});
    if (rate > best) {
      best = rate;
      best_conns = conns;
    }
  }
  ctx.raw_rate = best;
  ctx.report.note(absl::StrFormat(
      "ratios are against the best raw PGMQ cycle rate: %.0f tasks/s (batch %d, %d connections); "
      "each raw call is its own transaction (3 commits per batch), like start_flow/claim/complete",
      best, ctx.batch, best_conns));
}

}  // namespace pgflow::bench
