// migrate, status (and status --metrics), audit: the SQL core itself.
#include <cstdio>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/statements.h"
#include "internal/status_macros.h"
#include "internal/text_checks.h"
#include "migrate/embedded_sql.h"
#include "pgflow/migrate.h"

namespace pgflow::cli {
namespace {

nlohmann::json migration_json(const Migration& m) {
  return {{"version", m.version}, {"name", m.name}, {"file", m.file_name()}};
}

nlohmann::json status_json(const SchemaStatus& status) {
  nlohmann::json applied = nlohmann::json::array(), pending = nlohmann::json::array();
  for (const AppliedMigration& a : status.applied) {
    nlohmann::json m = migration_json(a.migration);
    m["applied_at"] = rfc3339(a.applied_at);
    m["adopted"] = a.adopted;
    applied.push_back(std::move(m));
  }
  for (const Migration& m : status.pending) pending.push_back(migration_json(m));
  return {{"schema_version", status.applied.empty() ? 0 : status.applied.back().migration.version},
          {"library_version", status.library_version},
          {"pgmq_mode", status.pgmq_mode},
          {"realtime", status.realtime},
          {"applied", applied},
          {"pending", pending},
          {"problem", status.problem ? nlohmann::json(*status.problem) : nullptr}};
}

struct MigrateOptions {
  std::optional<int> to;
  bool adopt = false;
  bool dry_run = false;
};

int run_migrate(const Globals& g, const MigrateOptions& o) {
  pgflow::MigrateOptions options;
  options.target_version = o.to;
  options.adopt_existing_schema = o.adopt;
  if (o.dry_run) {
    // What the run would refuse, the dry run refuses too.
    if (absl::Status s = check_migration(g.database, options); !s.ok()) return fail(s);
    absl::StatusOr<SchemaStatus> status = schema_status(g.database);
    if (!status.ok()) return fail(status.status());
    nlohmann::json would_apply = nlohmann::json::array();
    for (const Migration& m : status->pending) {
      if (!o.to || m.version <= *o.to) would_apply.push_back(migration_json(m));
    }
    const bool installs_pgmq = status->pgmq_mode == "missing";
    if (g.json) {
      print_json(
          {{"dry_run", true}, {"would_apply", would_apply}, {"installs_pgmq", installs_pgmq}});
      return kOk;
    }
    if (installs_pgmq)
      std::printf(
          "would install PGMQ (the extension if the server offers it, else the bundled layer)\n");
    for (const auto& m : would_apply)
      std::printf("would apply  %s\n", m["file"].get<std::string>().c_str());
    if (would_apply.empty()) std::printf("nothing to apply: up to date\n");
    std::printf(
        "(dry run: nothing changed; `pgflow audit` checks what the next migration would refuse)\n");
    return kOk;
  }
  if (absl::Status s = migrate(g.database, options); !s.ok()) return fail(s);
  absl::StatusOr<SchemaStatus> status = schema_status(g.database);
  if (!status.ok()) return fail(status.status());
  if (g.json) {
    print_json(status_json(*status));
    return kOk;
  }
  const int version = status->applied.empty() ? 0 : status->applied.back().migration.version;
  std::printf(
      "pgflow schema at version %d (library %d), PGMQ %s%s\n", version, status->library_version,
      status->pgmq_mode.c_str(),
      o.to && *o.to < version ? absl::StrCat(" (already past --to ", *o.to, ")").c_str() : "");
  return kOk;
}

// The metrics in Prometheus' text exposition format, for node_exporter's textfile collector.
// (Slugs are letters, digits and underscores: nothing in a label value needs escaping.)
void print_prometheus(const nlohmann::json& flows) {
  struct Gauge {
    const char* name;
    const char* key;  // in kMetricsQuery's JSON
    const char* help;
    bool null_is_zero = true;  // else a null value (not readable) has no sample
  };
  constexpr Gauge kGauges[] = {
      {"pgflow_queued_tasks", "queued_tasks",
       "Tasks waiting in a queue of the flow (retries and delayed steps too)"},
      {"pgflow_started_tasks", "started_tasks", "Tasks of the flow being run by workers"},
      {"pgflow_oldest_queued_task_age_seconds", "oldest_queued_age_seconds",
       "How long the flow's oldest waiting task has waited (0: none waits)"},
      {"pgflow_timer_retries", "timer_retries",
       "Started runs of the flow whose due wait timers raised and are still due, set aside to be "
       "tried again (pgflow.timer_retries)",
       /*null_is_zero=*/false},
  };
  for (const Gauge& gauge : kGauges) {
    std::printf("# HELP %s %s\n# TYPE %s gauge\n", gauge.name, gauge.help, gauge.name);
    for (const auto& f : flows) {
      const nlohmann::json& value = f[gauge.key];
      if (value.is_null() && !gauge.null_is_zero) continue;
      std::printf("%s{flow=\"%s\"} %s\n", gauge.name, f["flow_slug"].get<std::string>().c_str(),
                  value.is_null() ? "0" : value.dump().c_str());
    }
  }
  std::printf("# HELP pgflow_runs Runs of the flow by status\n# TYPE pgflow_runs gauge\n");
  for (const auto& f : flows) {
    for (const char* status : {"started", "completed", "failed"}) {
      std::printf("pgflow_runs{flow=\"%s\",status=\"%s\"} %s\n",
                  f["flow_slug"].get<std::string>().c_str(), status,
                  f["runs"][status].dump().c_str());
    }
  }
}

int run_metrics(const Globals& g, bool prometheus) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> flows = query_json(*conn, kMetricsQuery);
  if (!flows.ok()) return fail(flows.status());
  if (prometheus) {
    print_prometheus(*flows);
    return kOk;
  }
  if (g.json) {
    print_json({{"flows", *flows}});
    return kOk;
  }
  Table table({"FLOW", "QUEUED TASKS", "STARTED TASKS", "OLDEST QUEUED", "RUNS STARTED",
               "COMPLETED", "FAILED", "TIMER RETRIES"});
  for (const auto& f : *flows) {
    const nlohmann::json& age = f["oldest_queued_age_seconds"];
    table.add_row({f["flow_slug"], display_text(f["queued_tasks"]),
                   display_text(f["started_tasks"]),
                   age.is_null() ? "-" : human_duration(absl::Seconds(age.get<double>())),
                   display_text(f["runs"]["started"]), display_text(f["runs"]["completed"]),
                   display_text(f["runs"]["failed"]), display_text(f["timer_retries"])});
  }
  table.print();
  return kOk;
}

struct StatusOptions {
  bool metrics = false;
  bool prometheus = false;
};

int run_status(const Globals& g, const StatusOptions& o) {
  if (o.prometheus && g.json) {
    // (`pgflow --json status ...` sets the program's --json, which excludes() does not see)
    std::fprintf(stderr,
                 "pgflow: --prometheus excludes --json\nRun `pgflow status --help` for usage.\n");
    return kUsage;
  }
  if (o.metrics) return run_metrics(g, o.prometheus);
  absl::StatusOr<SchemaStatus> status = schema_status(g.database);
  if (!status.ok()) return fail(status.status());
  // A database migrate would refuse is a bad answer (exit 3), said instead of "up to date".
  const int code = status->problem ? kBadOutcome : kOk;
  if (g.json) {
    print_json(status_json(*status));
    return code;
  }
  std::printf("PGMQ: %s\n", status->pgmq_mode.c_str());
  if (status->realtime != "off") {
    std::printf(
        "Supabase broadcasts: %s%s\n", status->realtime.c_str(),
        status->realtime == "on" ? "" : ": nothing is broadcast (docs/security.md, \"Realtime\")");
  }
  std::printf("library version: %d\n", status->library_version);
  for (const auto& a : status->applied) {
    std::printf("applied  %s  %s%s\n", a.migration.file_name().c_str(),
                rfc3339(a.applied_at).c_str(),
                a.adopted ? "  (adopted: an existing schema verified equal to it)" : "");
  }
  if (status->problem) {
    std::printf("migrate refuses this database: %s\n", internal::escaped(*status->problem).c_str());
    return code;
  }
  for (const auto& m : status->pending) std::printf("pending  %s\n", m.file_name().c_str());
  if (status->pending.empty()) std::printf("up to date\n");
  return kOk;
}

// The read-only report of the next pending migration, when it has one (sql/audit/); else which
// pending migration has the next one.
int run_audit(const Globals& g) {
  absl::StatusOr<SchemaStatus> status = schema_status(g.database);
  if (!status.ok()) return fail(status.status());
  auto say = [&](const std::string& summary, std::optional<int> version,
                 const nlohmann::json& findings) {
    if (g.json) {
      print_json({{"migration", version ? nlohmann::json(*version) : nlohmann::json(nullptr)},
                  {"summary", summary},
                  {"findings", findings}});
    } else {
      std::printf("%s\n", summary.c_str());
    }
  };
  if (status->problem) {
    say(absl::StrCat("migrate refuses this database: ", internal::escaped(*status->problem)),
        std::nullopt, nlohmann::json::array());
    return kBadOutcome;
  }
  if (status->pending.empty()) {
    say("up to date: nothing to audit", std::nullopt, nlohmann::json::array());
    return kOk;
  }
  const Migration& next = status->pending.front();
  if (status->applied.empty()) {
    say(absl::StrCat(pg::kNoPgflowSchema, " (", next.file_name(), " first); nothing to audit"),
        next.version, nlohmann::json::array());
    return kOk;
  }
  // The first pending migration that has an audit. An audit reads the schema as it is just
  // before its migration, so one further on runs only once the database is there.
  const internal::EmbeddedAudit* audit = nullptr;
  const Migration* audited = nullptr;
  for (const Migration& m : status->pending) {
    for (const auto& a : internal::embedded_audits()) {
      if (a.version == m.version) audit = &a;
    }
    if (audit != nullptr) {
      audited = &m;
      break;
    }
  }
  if (audited != &next) {
    const Migration& last_plain = audited == nullptr ? status->pending.back() : *(audited - 1);
    std::string plain = absl::StrCat("no preparation is needed for ", next.file_name());
    if (&last_plain != &next) absl::StrAppend(&plain, " to ", last_plain.file_name());
    if (audited == nullptr) {
      say(absl::StrCat(plain, ": no pending migration has an upgrade audit (docs/upgrading.md)"),
          next.version, nlohmann::json::array());
      return kOk;
    }
    const int before = audited->version - 1;
    say(absl::StrCat(plain, "; ", audited->file_name(), " has an upgrade audit, which runs at ",
                     "schema version ", before, ": `pgflow migrate --to ", before,
                     "`, then `pgflow audit` (docs/upgrading.md)"),
        audited->version, nlohmann::json::array());
    return kOk;
  }
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(g.database, "pgflow-cli");
  if (!conn.ok()) return fail(conn.status());
  // The audit is one SELECT; a read-only transaction makes sure of it.
  absl::StatusOr<pg::Result> rows = conn->exec(kBeginReadOnly);
  if (rows.ok()) rows = conn->exec(audit->sql);
  if (!rows.ok()) return fail(rows.status());
  nlohmann::json findings = nlohmann::json::array();
  int errors = 0;
  for (int r = 0; r < rows->rows(); ++r) {
    nlohmann::json finding;
    for (const char* name :
         {"severity", "category", "flow_slug", "step_slug", "detail", "repair_hint"}) {
      const int c = rows->column(name);
      finding[name] = c < 0 || rows->is_null(r, c) ? nlohmann::json(nullptr)
                                                   : nlohmann::json(std::string(rows->text(r, c)));
    }
    if (finding["severity"] == "error") ++errors;
    findings.push_back(std::move(finding));
  }
  const std::string summary =
      errors > 0
          ? absl::StrCat(next.file_name(), ": ", errors,
                         " error(s): the upgrade would refuse until they are fixed")
          : absl::StrCat(next.file_name(), ": no errors: the upgrade can run (docs/upgrading.md)");
  if (g.json) {
    say(summary, next.version, findings);
  } else {
    std::printf("audit of %s (read-only)\n\n", next.file_name().c_str());
    for (const auto& f : findings) {
      std::string where = display_text(f["flow_slug"]);
      if (!f["step_slug"].is_null()) where += "." + f["step_slug"].get<std::string>();
      std::printf("%-6s  %s%s\n  %s\n", display_text(f["severity"]).c_str(),
                  display_text(f["category"]).c_str(),
                  f["flow_slug"].is_null() ? "" : ("  (" + where + ")").c_str(),
                  display_text(f["detail"]).c_str());
      if (!f["repair_hint"].is_null())
        std::printf("  fix: %s\n", display_text(f["repair_hint"]).c_str());
      std::printf("\n");
    }
    std::printf("%s\n", summary.c_str());
  }
  return errors > 0 ? kBadOutcome : kOk;
}

}  // namespace

void add_schema_commands(CommandSet& commands) {
  CLI::App& app = commands.app();
  auto migrate_options = std::make_shared<MigrateOptions>();
  CLI::App* migrate = commands.add(
      &app, "migrate", "install or upgrade pgflow's SQL core (and PGMQ if missing)",
      [migrate_options](const Globals& g) { return run_migrate(g, *migrate_options); });
  migrate->add_option("--to", migrate_options->to, "stop after this migration version")
      ->check(CLI::PositiveNumber);
  migrate->add_flag("--dry-run", migrate_options->dry_run,
                    "list what would be applied; change nothing");
  migrate->add_flag(
      "--adopt", migrate_options->adopt,
      "take over a pgflow schema installed by upstream's tooling (no ledger) after checking it "
      "matches 0001 (docs/upgrading.md)");

  auto status_options = std::make_shared<StatusOptions>();
  CLI::App* status =
      commands.add(&app, "status", "applied and pending migrations and the PGMQ mode",
                   [status_options](const Globals& g) { return run_status(g, *status_options); });
  CLI::Option* metrics =
      status->add_flag("--metrics", status_options->metrics,
                       "instead: per flow, tasks queued and started, the oldest queued task's "
                       "age and runs by status (what an alert needs)");
  status
      ->add_flag(
          "--prometheus", status_options->prometheus,
          "with --metrics: in Prometheus' text format (for node_exporter's textfile collector)")
      ->needs(metrics)
      ->excludes("--json");

  commands.add(
      &app, "audit",
      "the read-only report of what the next pending migration would refuse (exit 3 if it would)",
      run_audit);
}

}  // namespace pgflow::cli
