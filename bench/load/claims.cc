// k. Claims against the substrate, on an idle server: the worker's own claim statement
// (worker/statements.h kReadAndClaim: pgmq.read and pgflow.claim_tasks in one round trip, with
// the worker's parameters) taking exactly 10 messages from a backlog of 1-step runs, against the
// raw reference: pgmq.read of 10 followed by pgmq.set_vt of each message read (the visibility
// update a claim makes), also in one round trip.
//
// Claims and raw pairs alternate in blocks of 10, so both see the same server. Outside the
// timed calls and the CPU windows, each block's tasks are completed with the worker's complete
// statement and the raw messages archived, as a worker would: the queues move on, and the
// backlog never runs dry (--claim_backlog runs remain after the last claim).
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal/random.h"
#include "internal/strings.h"
#include "load/support.h"
#include "worker/statements.h"

namespace pgflow::bench {
namespace {

constexpr int kClaimSize = 10;         // messages per claim (the target's)
constexpr int kBlock = 10;             // calls per CPU window: /proc counts CPU in 10 ms ticks
constexpr int kWarmupBlocks = 2;       // not measured (plan caches, connections)
constexpr int kVisibilitySeconds = 5;  // WorkerConfig's default visibility_timeout
// The step's default timeout (60 s) + 2, as claim_tasks sets it.
constexpr int kClaimedVisibilitySeconds = 62;

// The raw pair in one round trip: the read, then the visibility update of each message read.
constexpr char kReadThenSetVt[] =
    "select m.msg_id from pgmq.read($1::text, $2::int, $3::int) m "
    "cross join lateral pgmq.set_vt($1::text, m.msg_id, $4::int) v";

// Round trips (ms) and CPU of one kind of call over the measured blocks.
struct Calls {
  std::vector<double> ms;
  CpuTally cpu;  // inside the CPU windows

  // Sends `statement` with each of kBlock parameter lists inside one CPU window, timing each
  // round trip; keeps the figures when `measured`. Returns the replies.
  std::vector<pg::Result> block(Db& db, const CpuMeter& meter, bool measured,
                                std::string_view statement,
                                const std::vector<std::vector<pg::Param>>& params) {
    std::vector<pg::Result> replies;
    std::vector<double> times;
    const CpuSample cpu0 = meter.sample();
    const Clock::time_point t0 = Clock::now();
    for (const std::vector<pg::Param>& p : params) {
      const Clock::time_point before = Clock::now();
      replies.push_back(db.exec(statement, p));
      times.push_back(millis_between(before, Clock::now()));
    }
    const double seconds = seconds_between(t0, Clock::now());
    const CpuSample cpu1 = meter.sample();
    if (measured) {
      ms.insert(ms.end(), times.begin(), times.end());
      cpu.add(seconds, static_cast<std::int64_t>(params.size()), cpu0, cpu1);
    }
    return replies;
  }

  std::string summary(const char* per) const {
    return absl::StrFormat("p50 %.3f ms, p99 %.3f ms over %d round trips; %s", percentile(ms, 50),
                           percentile(ms, 99), ms.size(), cpu.per_unit(per));
  }
};

std::string id_array(const std::vector<std::string>& ids) {
  std::string out = "{";
  for (size_t i = 0; i < ids.size(); ++i) absl::StrAppend(&out, i ? "," : "", ids[i]);
  return out + "}";
}

}  // namespace

void run_claims(BenchContext& ctx) {
  const std::int64_t claims = ctx.flags.scaled("claims", 2 * kBlock);
  const int blocks = kWarmupBlocks + static_cast<int>((claims + kBlock - 1) / kBlock);
  const std::int64_t messages = static_cast<std::int64_t>(blocks) * kBlock * kClaimSize;
  const std::int64_t runs = messages + ctx.flags.scaled("claim_backlog");
  progress(absl::StrFormat(
      "k: %d claims of %d messages (the worker's statement) and as many raw read + set_vt "
      "pairs, on a backlog of %d runs",
      (blocks - kWarmupBlocks) * kBlock, kClaimSize, runs));

  Db db = Db::open(ctx.url, "pgflow-bench-claims");
  const CpuMeter meter(db);
  const FlowDefinition def = one_step_flow(unique_slug("bench_claims"));
  const std::string queue = internal::ascii_lower(def.slug);
  compile_flow(db, def);
  prefill_runs(db, def.slug, runs, "1");
  // The raw queue holds as many task-shaped messages as the flow's queue.
  const std::string raw_queue = unique_slug("bench_raw_claims");
  db.exec("select pgmq.create($1)", {raw_queue});
  db.exec(kSendTaskMessages, {raw_queue, std::to_string(runs)});
  db.exec("analyze pgflow.runs, pgflow.step_states, pgflow.step_tasks");

  // Registered as the worker registers (EdgeWorker startup), under the worker's function name.
  const std::string worker_id = internal::random_uuid();
  db.exec(internal::kRegisterWorker, {worker_id, def.slug + "-worker", def.slug, queue,
                                      db.scalar("select pgflow.worker_protocol()::text")});

  Calls claimed, raw;
  for (int b = 0; b < blocks; ++b) {
    const bool measured = b >= kWarmupBlocks;
    std::vector<std::vector<pg::Param>> claim_params, raw_params;
    for (int i = 0; i < kBlock; ++i) {
      claim_params.push_back({queue, def.slug, std::to_string(kVisibilitySeconds),
                              std::to_string(kClaimSize), worker_id, pg::Param(),
                              internal::random_uuid()});
      raw_params.push_back({raw_queue, std::to_string(kVisibilitySeconds),
                            std::to_string(kClaimSize), std::to_string(kClaimedVisibilitySeconds)});
    }
    nlohmann::json results = nlohmann::json::array();
    for (const pg::Result& rows :
         claimed.block(db, meter, measured, internal::kReadAndClaim, claim_params)) {
      if (rows.rows() != kClaimSize)
        throw BenchError(
            absl::StrFormat("k: a claim took %d messages, not %d", rows.rows(), kClaimSize));
      for (int i = 0; i < rows.rows(); ++i) {
        if (rows.text(i, 0) != "claimed") {
          throw BenchError(absl::StrCat("k: a claim returned \"",
                                        internal::absl_view(rows.text(i, 0)), "\" for message ",
                                        internal::absl_view(rows.text(i, 1))));
        }
        results.push_back({{"run_id", std::string(rows.text(i, 2))},
                           {"step_slug", std::string(rows.text(i, 3))},
                           {"task_index", rows.int64(i, 4).value_or(0)},
                           {"output", 2}});
      }
    }
    std::vector<std::string> read_ids;
    for (const pg::Result& rows : raw.block(db, meter, measured, kReadThenSetVt, raw_params)) {
      if (rows.rows() != kClaimSize)
        throw BenchError(
            absl::StrFormat("k: a raw read took %d messages, not %d", rows.rows(), kClaimSize));
      for (int i = 0; i < rows.rows(); ++i) read_ids.emplace_back(rows.text(i, 0));
    }
    // Not timed: the tasks are reported done as the reporter does, the raw messages archived.
    db.exec(internal::kCompleteBatch, {results.dump()});
    db.exec("select count(*) from pgmq.archive($1::text, $2::bigint[])",
            {raw_queue, id_array(read_ids)});
  }
  db.exec("select pgmq.drop_queue($1)", {raw_queue});
  drop_flow(db, def.slug);
  vacuum_run_tables(db);

  const double claim_p50 = percentile(claimed.ms, 50);
  const std::string context = absl::StrFormat(
      "blocks of %d alternating with the raw pairs, %d warm-up blocks each; a backlog of %d runs, "
      "%d left at the end",
      kBlock, kWarmupBlocks, runs, runs - messages);
  ctx.report.add({.id = "k1",
                  .name = "claim of 10: the worker's read + claim_tasks statement, p50",
                  .value = claim_p50,
                  .unit = "ms",
                  .note = claimed.summary("claim") + "; " + context,
                  .server_us = claimed.cpu.server_us()});
  ctx.report.add(
      {.id = "k2", .name = "claim of 10, p99", .value = percentile(claimed.ms, 99), .unit = "ms"});
  ctx.report.add({.id = "k3",
                  .name = "raw pgmq.read of 10 + pgmq.set_vt of each, one round trip, p50",
                  .value = percentile(raw.ms, 50),
                  .unit = "ms",
                  .note = raw.summary("pair"),
                  .server_us = raw.cpu.server_us()});
  ctx.report.add({.id = "k4",
                  .name = "raw read of 10 + set_vt, p99",
                  .value = percentile(raw.ms, 99),
                  .unit = "ms"});
  ctx.report.verdict(
      {.what = "claim of 10, idle server: round trip p50",
       .met = claim_p50 <= 1,
       .figure = absl::StrFormat("%.3f ms (p99 %.3f ms)", claim_p50, percentile(claimed.ms, 99)),
       .target = "<= 1 ms"});
  if (claimed.cpu.server_us() && raw.cpu.server_us()) {
    ctx.report.add({.id = "k5",
                    .name = "claim / raw pair, server CPU",
                    .value = *claimed.cpu.server_us() / *raw.cpu.server_us(),
                    .unit = "x"});
    ctx.report.verdict(multiple_verdict(
        "claim of 10: server CPU per claim over a raw read of 10 + set_vt",
        *claimed.cpu.server_us(), *raw.cpu.server_us(), "us", 4, /*at_most=*/true));
  }
}

}  // namespace pgflow::bench
