// pgflow: the operator command line.
//
//   pgflow migrate --database URL [--to N] [--adopt]   install or upgrade the SQL core
//   pgflow status  --database URL            applied and pending migrations, PGMQ mode
//   pgflow flows   --database URL [--json]   each flow's alias, queue mode and route, with the
//                                            live workers of every queue (a coverage check)
//   pgflow aliases --database URL [--json]   each alias's active version and its versions
//   pgflow activate ALIAS SLUG --expected CURRENT | --expected-none
//                                            switch an alias's active version (compare-and-swap)
//   pgflow run cancel RUN_ID [--reason TEXT]  cancel a started run
//   pgflow run retry RUN_ID [--new-run-id UUID]  a new run of a failed run, same input
//   pgflow run resume RUN_ID                 continue a failed or cancelled run
//
// --database defaults to $DATABASE_URL. Exit status: 0 on success, 1 on failure, 2 on
// bad usage.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/client.h"
#include "pgflow/migrate.h"

namespace {

// Options that take no value.
const std::set<std::string> kSwitches = {"adopt", "json", "expected-none"};

struct Args {
  std::optional<std::string> database;
  std::map<std::string, std::string> flags;
  std::vector<std::string> positional;
};

constexpr char kUsage[] =
    "usage: pgflow <command> [--database URL] [options]\n"
    "\n"
    "commands:\n"
    "  migrate [--to N] [--adopt]\n"
    "                     install or upgrade pgflow's SQL core (and PGMQ if missing);\n"
    "                     --adopt: take over a pgflow schema installed by upstream's tooling\n"
    "                     (no ledger) after checking it matches 0001 (docs/upgrading.md)\n"
    "  status             show applied and pending migrations and the PGMQ mode\n"
    "  flows [--json]     each flow's alias, queue mode and route: the queue of every step\n"
    "                     and the live workers serving it (0: that step's tasks wait)\n"
    "  aliases [--json]   each alias: its active version (what start_flow starts) and versions\n"
    "  activate ALIAS SLUG (--expected CURRENT | --expected-none)\n"
    "                     make SLUG the active version of ALIAS if ALIAS still points to\n"
    "                     CURRENT (--expected-none: if it has no active version); on a\n"
    "                     conflict nothing changes and the actual version is named\n"
    "  run cancel RUN_ID [--reason TEXT]\n"
    "                     cancel a started run: it fails as cancelled, its tasks are cancelled\n"
    "                     and the workers running them stop them (a finished run: no change)\n"
    "  run retry RUN_ID [--new-run-id UUID]\n"
    "                     start a new run of a failed or cancelled run's flow version with the\n"
    "                     same input, linked to it; prints the new run id\n"
    "  run resume RUN_ID  continue a failed or cancelled run where it stopped: completed steps\n"
    "                     are kept, failed and cancelled tasks run again\n"
    "\n"
    "--database defaults to the DATABASE_URL environment variable.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "pgflow: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const absl::Status& status) {
  std::string message(status.message());
  if (message.rfind("pgflow: ", 0) == 0) message.erase(0, 8);  // (library messages carry it)
  std::fprintf(stderr, "pgflow: %s\n", message.c_str());
  return 1;
}

// A one-connection client that fails at once when the database is unreachable (an operator
// at a terminal wants the error, not a minute of retries).
absl::StatusOr<pgflow::Client> connect_client(const std::string& database) {
  return pgflow::Client::connect(
      {.connection_string = database, .max_connections = 1, .connect_timeout = std::chrono::milliseconds(0)});
}

// The value of switch --`name`: absent is false; `--name` or `--name=true` true,
// `--name=false` false; anything else is a usage error (nullopt).
std::optional<bool> switch_value(const Args& args, const std::string& name) {
  auto it = args.flags.find(name);
  if (it == args.flags.end() || it->second == "false") return false;
  if (it->second != "true") return std::nullopt;
  return true;
}

int run_migrate(const std::string& database, const Args& args) {
  pgflow::MigrateOptions options;
  if (auto it = args.flags.find("to"); it != args.flags.end()) {
    int to = 0;
    if (!absl::SimpleAtoi(it->second, &to) || to < 1) return usage_error("--to needs a positive version");
    options.target_version = to;
  }
  const std::optional<bool> adopt = switch_value(args, "adopt");
  if (!adopt) return usage_error("--adopt takes no value");
  options.adopt_existing_schema = *adopt;
  if (absl::Status s = pgflow::migrate(database, options); !s.ok()) return fail(s);
  auto status = pgflow::schema_status(database);
  if (!status.ok()) return fail(status.status());
  int version = status->applied.empty() ? 0 : status->applied.back().migration.version;
  std::printf("pgflow schema at version %d (library %d), PGMQ %s\n", version,
              status->library_version, status->pgmq_mode.c_str());
  return 0;
}

// Times are shown in UTC, RFC 3339.
std::string timestamp(absl::Time t) { return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone()); }

int run_status(const std::string& database, const Args&) {
  auto status = pgflow::schema_status(database);
  if (!status.ok()) return fail(status.status());
  std::printf("PGMQ: %s\n", status->pgmq_mode.c_str());
  std::printf("library version: %d\n", status->library_version);
  for (const auto& a : status->applied) {
    std::printf("applied  %s  %s%s\n", a.migration.file_name().c_str(), timestamp(a.applied_at).c_str(),
                a.adopted ? "  (adopted: an existing schema verified equal to it)" : "");
  }
  for (const auto& m : status->pending) std::printf("pending  %s\n", m.file_name().c_str());
  if (status->pending.empty()) std::printf("up to date\n");
  return 0;
}

// Every flow's alias and route with the live workers of each queue: a worker is live when it
// has not stopped, is not deprecated and sent a heartbeat in the last 30 seconds
// (docs/worker.md has the same query to copy).
constexpr char kFlowsQuery[] = R"sql(
select coalesce(jsonb_agg(jsonb_build_object(
  'flow_slug', f.flow_slug,
  'flow_alias', f.flow_alias,
  'active', exists (select 1 from pgflow.flow_aliases a
                    where a.flow_alias = f.flow_alias and a.flow_slug = f.flow_slug),
  'queue_mode', f.queue_mode,
  'routes', (select coalesce(jsonb_agg(jsonb_build_object(
                      'step_slug', s.step_slug, 'queue_name', s.queue_name,
                      'live_workers', (select count(*) from pgflow.workers w
                                       where w.queue_name = s.queue_name and w.stopped_at is null
                                         and w.deprecated_at is null
                                         and w.last_heartbeat_at > now() - interval '30 seconds'))
                    order by s.step_index), '[]'::jsonb)
             from pgflow.steps s where s.flow_slug = f.flow_slug))
  order by f.flow_slug), '[]'::jsonb)::text
from pgflow.flows f
)sql";

int run_flows(const std::string& database, const Args& args) {
  const std::optional<bool> as_json = switch_value(args, "json");
  if (!as_json) return usage_error("--json takes no value");
  auto conn = pgflow::pg::Connection::open(database, "pgflow-cli");
  if (!conn.ok()) return fail(conn.status());
  auto rows = conn->exec(kFlowsQuery);
  if (!rows.ok()) return fail(rows.status());
  const nlohmann::json flows = nlohmann::json::parse(rows->scalar());
  if (*as_json) {
    std::printf("%s\n", flows.dump(2).c_str());
    return 0;
  }
  std::printf("%-24s %-24s %-8s %-5s %-24s %-47s %s\n", "FLOW", "ALIAS", "STATE", "MODE", "STEP", "QUEUE",
              "LIVE WORKERS");
  for (const auto& flow : flows) {
    const std::string slug = flow["flow_slug"];
    const std::string alias = flow["flow_alias"];
    const char* state = flow["active"].get<bool>() ? "active" : "inactive";
    const std::string mode = flow["queue_mode"];
    bool first = true;
    for (const auto& route : flow["routes"]) {
      std::printf("%-24s %-24s %-8s %-5s %-24s %-47s %lld\n", first ? slug.c_str() : "", first ? alias.c_str() : "",
                  first ? state : "", first ? mode.c_str() : "", route["step_slug"].get<std::string>().c_str(),
                  route["queue_name"].get<std::string>().c_str(), route["live_workers"].get<long long>());
      first = false;
    }
    if (first) {
      std::printf("%-24s %-24s %-8s %-5s %-24s\n", slug.c_str(), alias.c_str(), state, mode.c_str(), "(no steps)");
    }
  }
  return 0;
}

nlohmann::json alias_json(const pgflow::FlowAlias& alias) {
  return {{"alias", alias.alias},
          {"active_flow_slug", alias.active_flow_slug ? nlohmann::json(*alias.active_flow_slug) : nullptr},
          {"versions", alias.versions},
          {"updated_at", alias.updated_at ? nlohmann::json(timestamp(*alias.updated_at)) : nullptr}};
}

int run_aliases(const std::string& database, const Args& args) {
  const std::optional<bool> as_json = switch_value(args, "json");
  if (!as_json) return usage_error("--json takes no value");
  auto client = connect_client(database);
  if (!client.ok()) return fail(client.status());
  auto aliases = client->flow_aliases();
  if (!aliases.ok()) return fail(aliases.status());
  if (*as_json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& alias : *aliases) out.push_back(alias_json(alias));
    std::printf("%s\n", out.dump(2).c_str());
    return 0;
  }
  std::printf("%-24s %-24s %s\n", "ALIAS", "ACTIVE", "VERSIONS");
  for (const auto& alias : *aliases) {
    std::printf("%-24s %-24s %s\n", alias.alias.c_str(), alias.active_flow_slug.value_or("(none)").c_str(),
                absl::StrJoin(alias.versions, ", ").c_str());
  }
  return 0;
}

int run_activate(const std::string& database, const Args& args) {
  if (args.positional.size() != 2) return usage_error("activate needs ALIAS and SLUG");
  const std::optional<bool> none = switch_value(args, "expected-none");
  if (!none) return usage_error("--expected-none takes no value");
  auto expected = args.flags.find("expected");
  if (*none == (expected != args.flags.end())) {
    return usage_error("activate needs exactly one of --expected CURRENT (the version the alias points to now) "
                       "and --expected-none (the alias has no active version yet)");
  }
  auto client = connect_client(database);
  if (!client.ok()) return fail(client.status());
  auto activated = client->activate_flow_version(
      args.positional[0], args.positional[1],
      *none ? std::nullopt : std::optional<std::string>(expected->second));
  if (!activated.ok()) return fail(activated.status());
  std::printf("alias %s now starts %s (was %s)\n", activated->alias.c_str(),
              activated->active_flow_slug.value_or("(none)").c_str(),
              *none ? "no version" : expected->second.c_str());
  return 0;
}

// pgflow run cancel|retry|resume RUN_ID: Client's run control.
int run_control(const std::string& database, const Args& args) {
  if (args.positional.size() != 2) return usage_error("run needs an action (cancel, retry or resume) and a RUN_ID");
  const std::string& action = args.positional[0];
  const std::string& run_id = args.positional[1];
  if (action != "cancel" && action != "retry" && action != "resume") {
    return usage_error("unknown run action " + action + " (cancel, retry or resume)");
  }
  if (args.flags.contains("reason") && action != "cancel") return usage_error("--reason is for run cancel");
  if (args.flags.contains("new-run-id") && action != "retry") return usage_error("--new-run-id is for run retry");
  auto option = [&args](const char* name) -> std::optional<std::string> {
    auto it = args.flags.find(name);
    return it == args.flags.end() ? std::nullopt : std::optional<std::string>(it->second);
  };
  auto client = connect_client(database);
  if (!client.ok()) return fail(client.status());
  if (action == "cancel") {
    auto cancelled = client->cancel_run(run_id, option("reason"));
    if (!cancelled.ok()) return fail(cancelled.status());
    std::printf(*cancelled ? "run %s cancelled\n" : "run %s had already finished: nothing changed\n", run_id.c_str());
  } else if (action == "retry") {
    auto retry = client->retry_run(run_id, option("new-run-id"));
    if (!retry.ok()) return fail(retry.status());
    std::printf("run %s retried as run %s\n", run_id.c_str(), retry->c_str());
  } else {
    auto resumed = client->resume_run(run_id);
    if (!resumed.ok()) return fail(resumed.status());
    std::printf("run %s resumed: %s\n", run_id.c_str(), std::string(pgflow::to_string(resumed->status)).c_str());
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string_view> argv_list(argv + 1, argv + argc);
  if (argv_list.empty() || argv_list[0] == "--help" || argv_list[0] == "-h" ||
      argv_list[0] == "help") {
    std::fputs(kUsage, argv_list.empty() ? stderr : stdout);
    return argv_list.empty() ? 2 : 0;
  }
  const std::string command(argv_list[0]);
  Args args;
  for (size_t i = 1; i < argv_list.size(); ++i) {
    std::string_view a = argv_list[i];
    if (a.substr(0, 2) != "--") {
      args.positional.emplace_back(a);
      continue;
    }
    std::string key(a.substr(2));
    std::string value;
    if (auto eq = key.find('='); eq != std::string::npos) {
      value = key.substr(eq + 1);
      key = key.substr(0, eq);
    } else if (kSwitches.contains(key)) {
      value = "true";  // a switch takes no value: `--json`
    } else if (i + 1 < argv_list.size()) {
      value = std::string(argv_list[++i]);
    } else {
      return usage_error("--" + key + " needs a value");
    }
    if (key == "database") {
      args.database = value;
    } else {
      args.flags[key] = value;
    }
  }
  args.database = pgflow::pg::connection_string_or_env(args.database.value_or(""));

  struct Command {
    std::function<int(const std::string&, const Args&)> run;
    std::vector<std::string> flags;  // besides --database
    size_t positional = 0;           // arguments that are not options
  };
  const std::map<std::string, Command> commands = {
      {"migrate", {run_migrate, {"to", "adopt"}}},
      {"status", {run_status, {}}},
      {"flows", {run_flows, {"json"}}},
      {"aliases", {run_aliases, {"json"}}},
      {"activate", {run_activate, {"expected", "expected-none"}, 2}},
      {"run", {run_control, {"reason", "new-run-id"}, 2}},
  };
  auto it = commands.find(command);
  if (it == commands.end()) return usage_error("unknown command " + command);
  if (args.positional.size() > it->second.positional) {
    return usage_error("unexpected argument " + args.positional[it->second.positional]);
  }
  for (const auto& [flag, value] : args.flags) {
    const auto& known = it->second.flags;
    if (std::find(known.begin(), known.end(), flag) == known.end()) {
      return usage_error("unknown option --" + flag + " for " + command);
    }
  }
  if (!args.database) return usage_error("no database: pass --database URL or set DATABASE_URL");
  return it->second.run(*args.database, args);
}
