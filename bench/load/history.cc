// y. Cost growth with history: b1 and c1 on one flow while the run tables are (nearly) empty,
// then on the same flow again after --history_runs finished runs of it were filled in SQL -
// completed runs, their completed step states and tasks, and their archived messages in the
// flow queue's archive table - and the tables vacuumed and analyzed (as autovacuum would have
// done to an old history). Target: server CPU per task on full tables within 15% of empty ones.
#include <algorithm>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "internal/strings.h"
#include "load/support.h"
#include "pg/connection.h"

namespace pgflow::bench {
namespace {

constexpr std::int64_t kFillChunk = 100000;  // runs per fill transaction

// Inserts $2 finished runs of the 1-step flow $1 into the run tables and the queue's archive
// table. Run n (n = $4 + 1 ... $4 + $2) started at $3 + n * 10 ms; its task was claimed 1 ms
// and completed 3 ms later (visible again after the step's 60 s + 2, as claim_tasks sets it).
// Message ids come from the queue's own sequence ($5), so later messages never collide with
// them.
// Every row satisfies the tables' constraints, keys included.
std::string fill_statement(const std::string& queue) {
  return absl::StrCat(R"sql(
with h as materialized (
  select gen_random_uuid() as run_id, nextval($5::regclass) as msg_id,
         $3::timestamptz + make_interval(secs => ($4::bigint + i) * 0.01) as at
  from generate_series(1, $2::int) i
  order by 1  -- the primary keys' order: each chunk touches fewer index pages
), runs as (
  insert into pgflow.runs (run_id, flow_slug, status, input, output, remaining_steps,
                           started_at, completed_at)
  select h.run_id, $1::text, 'completed', '1', '{"work": 2}', 0, h.at, h.at + interval '3 ms'
  from h
), states as (
  insert into pgflow.step_states (flow_slug, run_id, step_slug, status, remaining_tasks,
                                  initial_tasks, remaining_deps, output, created_at, started_at,
                                  completed_at)
  select $1::text, h.run_id, 'work', 'completed', 0, 1, 0, '2', h.at, h.at,
         h.at + interval '3 ms'
  from h
), tasks as (
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, message_id, task_index, status,
                                 attempts_count, output, queued_at, started_at, completed_at,
                                 queue_name, last_claim_id)
  select $1::text, h.run_id, 'work', h.msg_id, 0, 'completed', 1, '2', h.at,
         h.at + interval '1 ms', h.at + interval '3 ms', lower($1::text), gen_random_uuid()
  from h
)
insert into pgmq.)sql",
                      pg::quote_identifier("a_" + queue), R"sql(
  (msg_id, read_ct, enqueued_at, archived_at, vt, message)
select h.msg_id, 1, h.at, h.at + interval '3 ms', h.at + interval '62.001 s',
       jsonb_build_object('flow_slug', $1::text, 'run_id', h.run_id, 'step_slug', 'work',
                          'task_index', 0)
from h
)sql");
}

struct Fill {
  double seconds = 0;
  bool checked_keys = true;  // foreign keys checked row by row during the fill
};

// Fills `runs` finished runs of `flow` (see fill_statement), in transactions of kFillChunk.
// A superuser fills with the tables' foreign-key triggers off (session_replication_role =
// replica, for the fill's transactions only): the rows satisfy the keys by construction, and
// checking 4 keys per row one by one would take longer than the inserts. Not when the tables
// have triggers of their own, which that would skip too.
Fill fill_history(Db& db, const FlowDefinition& flow, const std::string& queue, std::int64_t runs) {
  const std::string archive = "pgmq." + pg::quote_identifier("a_" + queue);
  const bool replica =
      db.scalar("select rolsuper from pg_roles where rolname = current_user") == "t" &&
      db.integer(
          "select count(*) from pg_trigger where not tgisinternal and tgrelid in "
          "('pgflow.runs'::regclass, 'pgflow.step_states'::regclass, "
          "'pgflow.step_tasks'::regclass, $1::regclass)",
          {archive}) == 0;
  const std::string statement = fill_statement(queue);
  const std::string sequence = db.scalar("select pg_get_serial_sequence($1, 'msg_id')",
                                         {"pgmq." + pg::quote_identifier("q_" + queue)});
  const Clock::time_point t0 = Clock::now();
  // The history ends where the fill begins.
  const std::string first_start =
      db.scalar("select (now() - make_interval(secs => ($1::bigint + 1) * 0.01))::text",
                {std::to_string(runs)});
  for (std::int64_t done = 0; done < runs; done += kFillChunk) {
    const std::int64_t n = std::min(kFillChunk, runs - done);
    db.exec("begin");
    if (replica) db.exec("set local session_replication_role = replica");
    db.exec(statement, {flow.slug, std::to_string(n), first_start, std::to_string(done), sequence});
    db.exec("commit");
  }
  return {.seconds = seconds_between(t0, Clock::now()), .checked_keys = !replica};
}

// VACUUM ANALYZE of the run tables and the queue's archive (between measurements, as the
// other sections do, and after the fill), then a CHECKPOINT where allowed: the server CPU of
// a measurement is the whole cluster's, and writing out the pages the fill and the vacuum
// dirtied (hundreds of MB) is no part of the hot path - an old history was written out long
// ago. Returns whether the checkpoint ran.
bool settle_tables(Db& db, const std::string& queue) {
  vacuum_run_tables(db);
  db.exec("vacuum analyze pgmq." + pg::quote_identifier("a_" + queue));
  try {
    db.exec("checkpoint");
    return true;
  } catch (const BenchError&) {  // needs superuser or pg_checkpoint
    return false;
  }
}

// y1-y4's verdict: CPU per task on full tables over empty ones.
void growth_verdict(BenchContext& ctx, const std::string& what, const Throughput& empty,
                    const Throughput& full) {
  if (!empty.finished || !full.finished || !empty.server_us() || !full.server_us()) return;
  Verdict v = multiple_verdict(what, *full.server_us(), *empty.server_us(), "us", 1.15,
                               /*at_most=*/true);
  v.figure += absl::StrFormat("; %.0f vs %.0f tasks/s", full.rate(), empty.rate());
  ctx.report.verdict(std::move(v));
}

}  // namespace

void run_history(BenchContext& ctx) {
  const std::int64_t history = ctx.flags.scaled("history_runs");
  const std::int64_t backlog = ctx.flags.scaled("backlog");
  const std::int64_t e2e_runs = ctx.flags.scaled("e2e_runs");
  const int producers = static_cast<int>(std::max<std::int64_t>(1, ctx.flags.integer("producers")));
  Db db = Db::open(ctx.url);
  const FlowDefinition def = one_step_flow(unique_slug("bench_history"));
  const std::string queue = internal::ascii_lower(def.slug);
  compile_flow(db, def);
  const std::string size_empty =
      db.scalar("select pg_size_pretty(pg_database_size(current_database()))");

  // b1 then c1, each after a VACUUM ANALYZE and a CHECKPOINT.
  auto measure = [&](const char* tables) {
    progress(absl::StrFormat("y: b1 and c1 on %s tables", tables));
    settle_tables(db, queue);
    Throughput b1 = drain_backlog(ctx, db, def, backlog, 64, false);
    settle_tables(db, queue);
    Throughput c1 =
        produce_and_drain(ctx, ctx.url, db, def, StartCall::kStartFlow, e2e_runs, producers);
    return std::make_pair(std::move(b1), std::move(c1));
  };
  const auto [b1_empty, c1_empty] = measure("empty");

  progress(absl::StrFormat("y: filling %d finished runs in SQL", history));
  const Fill fill = fill_history(db, def, queue, history);
  const Clock::time_point vacuum_start = Clock::now();
  const bool checkpoint = settle_tables(db, queue);
  const double vacuum_seconds = seconds_between(vacuum_start, Clock::now());
  const std::string size_full =
      db.scalar("select pg_size_pretty(pg_database_size(current_database()))");
  const std::string full = absl::StrFormat("%d finished runs in the", history);
  const auto [b1_full, c1_full] = measure(full.c_str());

  const Clock::time_point drop_start = Clock::now();
  drop_flow(db, def.slug);
  const double drop_seconds = seconds_between(drop_start, Clock::now());
  vacuum_run_tables(db);

  const std::string with = absl::StrFormat(", %d finished runs in the tables", history);
  add_throughput_row(ctx, "y1", "b1 on one flow, empty run tables", b1_empty);
  add_throughput_row(ctx, "y2", "b1 on the same flow" + with, b1_full);
  add_throughput_row(ctx, "y3", "c1 on one flow, empty run tables", c1_empty);
  add_throughput_row(ctx, "y4", "c1 on the same flow" + with, c1_full);
  ctx.report.add(
      {.id = "y5",
       .name = absl::StrFormat("history fill in SQL: %d runs, tasks, archived messages", history),
       .value = fill.seconds,
       .unit = "s",
       .note = absl::StrFormat(
           "%.0f runs/s (foreign keys %s); then VACUUM ANALYZE%s %.1f s; database %s -> %s; "
           "deleting the flow with its history afterwards (drop_flow) took %.1f s",
           static_cast<double>(history) / fill.seconds,
           fill.checked_keys ? "checked row by row"
                             : "not checked: superuser fill with "
                               "session_replication_role = replica",
           checkpoint ? " and CHECKPOINT"
                      : " (CHECKPOINT not allowed: the flush of the fill "
                        "counts in y2/y4's server CPU)",
           vacuum_seconds, size_empty, size_full, drop_seconds)});
  growth_verdict(
      ctx,
      absl::StrFormat("b1 with %d finished runs: server CPU per task over empty tables", history),
      b1_empty, b1_full);
  growth_verdict(
      ctx,
      absl::StrFormat("c1 with %d finished runs: server CPU per task over empty tables", history),
      c1_empty, c1_full);
}

}  // namespace pgflow::bench
