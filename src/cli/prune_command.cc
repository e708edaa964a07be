// prune --older-than DURATION [--dry-run]: delete finished history with the pruning helper
// (sql/contrib/prune_data_older_than.sql), counting what goes.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "internal/status_macros.h"

namespace pgflow::cli {
namespace {

// What prune_data_older_than($1) deletes, counted with the same predicates (cutoff: now() - $1;
// now() is the transaction's start, so the counts and the deletion agree). Archived messages
// are counted per queue on a flow route through query_to_xml, keeping this one read-only SELECT.
constexpr char kCountQuery[] = R"sql(
with cutoff as (select now() - $1::interval as at),
old_runs as (
  select r.run_id from pgflow.runs r, cutoff c
  where r.status in ('completed', 'failed') and coalesce(r.completed_at, r.failed_at) < c.at)
select jsonb_build_object(
  'cutoff', (select at from cutoff),
  'runs', (select count(*) from old_runs),
  'step_states', (select count(*) from pgflow.step_states s join old_runs o using (run_id)),
  'step_tasks', (select count(*) from pgflow.step_tasks t join old_runs o using (run_id)),
  'workers', (select count(*) from pgflow.workers w, cutoff c where w.last_heartbeat_at < c.at),
  'archived_messages', (select coalesce(sum((xpath('/row/n/text()', query_to_xml(
                            format('select count(*) as n from pgmq.%I where archived_at < %L',
                                   pgmq.format_table_name(q.queue_name, 'a'), c.at),
                            false, true, '')))[1]::text::bigint), 0)
                        from (select distinct s.queue_name from pgflow.steps s) q, cutoff c))::text
)sql";

struct PruneOptions {
  std::string older_than;
  bool dry_run = false;
};

absl::StatusOr<nlohmann::json> prune_counted(pg::Connection& conn, const std::string& interval, bool dry_run) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result helper,
                          conn.exec("select to_regprocedure('pgflow.prune_data_older_than(interval)') is not null"));
  if (!dry_run && helper.scalar() != "t") {
    return absl::FailedPreconditionError(
        "the pruning helper pgflow.prune_data_older_than(interval) is not installed: install it with "
        "`psql \"$DATABASE_URL\" -f share/pgflow/sql/contrib/prune_data_older_than.sql` (docs/operations.md)");
  }
  nlohmann::json counts;
  absl::Status done = pg::in_transaction(conn, [&]() -> absl::Status {
    if (dry_run) PGFLOW_RETURN_IF_ERROR(conn.exec("set transaction read only").status());
    PGFLOW_ASSIGN_OR_RETURN(counts, query_json(conn, kCountQuery, {interval}));
    if (!dry_run) {
      PGFLOW_RETURN_IF_ERROR(conn.exec("select pgflow.prune_data_older_than($1::interval)", {interval}).status());
    }
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return counts;
}

int prune(const Globals& g, const PruneOptions& o) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> counts = prune_counted(*conn, to_interval(*parse_duration(o.older_than)), o.dry_run);
  if (!counts.ok()) return fail(counts.status());
  (*counts)["dry_run"] = o.dry_run;
  if (g.json) {
    print_json(*counts);
    return kOk;
  }
  std::printf("%s history that ended before %s:\n", o.dry_run ? "would delete" : "deleted",
              when((*counts)["cutoff"]).c_str());
  Table table({"WHAT", "ROWS"}, "  ");
  for (const char* what : {"runs", "step_states", "step_tasks", "workers", "archived_messages"}) {
    table.add_row({what, text((*counts)[what])});
  }
  table.print();
  if (o.dry_run) std::printf("(dry run: nothing changed)\n");
  return kOk;
}

}  // namespace

void add_prune_command(CommandSet& commands) {
  auto o = std::make_shared<PruneOptions>();
  CLI::App* prune_command = commands.add(
      &commands.app(), "prune",
      "delete runs that ended, workers silent and archived messages older than --older-than, with counts "
      "(needs the pruning helper, sql/contrib/prune_data_older_than.sql)",
      [o](const Globals& g) { return prune(g, *o); });
  prune_command->add_option("--older-than", o->older_than, "keep this much history: 14d, 12h, 2w")
      ->required()
      ->check(duration_check("14d, 12h, 2w"));
  prune_command->add_flag("--dry-run", o->dry_run, "count what would be deleted; change nothing");
}

}  // namespace pgflow::cli
