// prune --older-than DURATION [--dry-run]: delete finished history with the pruning helper
// (sql/contrib/prune_data_older_than.sql), counting what goes.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/statements.h"
#include "internal/status_macros.h"

namespace pgflow::cli {
namespace {

struct PruneOptions {
  std::string older_than;
  bool dry_run = false;
};

absl::StatusOr<nlohmann::json> prune_counted(pg::Connection& conn, const std::string& interval,
                                             bool dry_run) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result helper, conn.exec(kPruneHelperInstalled));
  if (!dry_run && helper.scalar() != "t") {
    return absl::FailedPreconditionError(
        "the pruning helper pgflow.prune_data_older_than(interval) is not installed: install it "
        "with "
        "`psql \"$DATABASE_URL\" -f share/pgflow/sql/contrib/prune_data_older_than.sql` "
        "(docs/operations.md)");
  }
  nlohmann::json counts;
  absl::Status done = pg::in_transaction(conn, [&]() -> absl::Status {
    if (dry_run) PGFLOW_RETURN_IF_ERROR(conn.exec(kTransactionReadOnly).status());
    PGFLOW_ASSIGN_OR_RETURN(counts, query_json(conn, kPruneCounts, {interval}));
    if (!dry_run) {
      PGFLOW_RETURN_IF_ERROR(conn.exec(kPrune, {interval}).status());
    }
    return absl::OkStatus();
  });
  if (!done.ok()) return done;
  return counts;
}

int prune(const Globals& g, const PruneOptions& o) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> counts =
      prune_counted(*conn, to_interval(*parse_duration(o.older_than)), o.dry_run);
  if (!counts.ok()) return fail(counts.status());
  (*counts)["dry_run"] = o.dry_run;
  if (g.json) {
    print_json(*counts);
    return kOk;
  }
  std::printf("%s history that ended before %s:\n", o.dry_run ? "would delete" : "deleted",
              timestamp_text((*counts)["cutoff"]).c_str());
  Table table({"WHAT", "ROWS"}, "  ");
  for (const char* what : {"runs", "step_states", "step_tasks", "workers", "archived_messages"}) {
    table.add_row({what, display_text((*counts)[what])});
  }
  table.print();
  if (o.dry_run) std::printf("(dry run: nothing changed)\n");
  return kOk;
}

}  // namespace

void add_prune_command(CommandSet& commands) {
  auto o = std::make_shared<PruneOptions>();
  CLI::App* prune_command =
      commands.add(&commands.app(), "prune",
                   "delete runs that ended, workers silent and archived messages older than "
                   "--older-than, with counts "
                   "(needs the pruning helper, sql/contrib/prune_data_older_than.sql)",
                   [o](const Globals& g) { return prune(g, *o); });
  prune_command->add_option("--older-than", o->older_than, "keep this much history: 14d, 12h, 2w")
      ->required()
      ->check(duration_check("14d, 12h, 2w"));
  prune_command->add_flag("--dry-run", o->dry_run, "count what would be deleted; change nothing");
}

}  // namespace pgflow::cli
