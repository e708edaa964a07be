// pgflow: the operator command line.
//
//   pgflow migrate --database URL [--to N]   install or upgrade the SQL core
//   pgflow status  --database URL            applied and pending migrations, PGMQ mode
//   pgflow flows   --database URL [--json]   each flow's queue mode and route, with the live
//                                            workers of every queue (a coverage check)
//
// --database defaults to $DATABASE_URL. Exit status: 0 on success, 1 on failure, 2 on
// bad usage.
#include <algorithm>
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
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/migrate.h"

namespace {

// Options that take no value.
const std::set<std::string> kSwitches = {"json"};

struct Args {
  std::optional<std::string> database;
  std::map<std::string, std::string> flags;
};

constexpr char kUsage[] =
    "usage: pgflow <command> [--database URL] [options]\n"
    "\n"
    "commands:\n"
    "  migrate [--to N]   install or upgrade pgflow's SQL core (and PGMQ if missing)\n"
    "  status             show applied and pending migrations and the PGMQ mode\n"
    "  flows [--json]     each flow's queue mode and route: the queue of every step and the\n"
    "                     live workers serving it (0: that step's tasks wait)\n"
    "\n"
    "--database defaults to the DATABASE_URL environment variable.\n";

int usage_error(const std::string& message) {
  std::fprintf(stderr, "pgflow: %s\n\n%s", message.c_str(), kUsage);
  return 2;
}

int fail(const absl::Status& status) {
  std::fprintf(stderr, "pgflow: %s\n", std::string(status.message()).c_str());
  return 1;
}

int run_migrate(const std::string& database, const Args& args) {
  pgflow::MigrateOptions options;
  if (auto it = args.flags.find("to"); it != args.flags.end()) {
    int to = 0;
    if (!absl::SimpleAtoi(it->second, &to) || to < 1) return usage_error("--to needs a positive version");
    options.target_version = to;
  }
  if (absl::Status s = pgflow::migrate(database, options); !s.ok()) return fail(s);
  auto status = pgflow::schema_status(database);
  if (!status.ok()) return fail(status.status());
  int version = status->applied.empty() ? 0 : status->applied.back().migration.version;
  std::printf("pgflow schema at version %d (library %d), PGMQ %s\n", version,
              status->library_version, status->pgmq_mode.c_str());
  return 0;
}

int run_status(const std::string& database, const Args&) {
  auto status = pgflow::schema_status(database);
  if (!status.ok()) return fail(status.status());
  std::printf("PGMQ: %s\n", status->pgmq_mode.c_str());
  std::printf("library version: %d\n", status->library_version);
  for (const auto& a : status->applied) {
    std::printf("applied  %s  %s\n", a.migration.file_name().c_str(), a.applied_at.c_str());
  }
  for (const auto& m : status->pending) std::printf("pending  %s\n", m.file_name().c_str());
  if (status->pending.empty()) std::printf("up to date\n");
  return 0;
}

// Every flow's route with the live workers of each queue: a worker is live when it has not
// stopped, is not deprecated and sent a heartbeat in the last 30 seconds (docs/worker.md has the
// same query to copy).
constexpr char kFlowsQuery[] = R"sql(
select coalesce(jsonb_agg(jsonb_build_object(
  'flow_slug', f.flow_slug,
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
  bool as_json = false;
  if (auto it = args.flags.find("json"); it != args.flags.end()) {
    if (it->second != "true" && it->second != "false") return usage_error("--json takes no value");
    as_json = it->second == "true";
  }
  auto conn = pgflow::pg::Connection::open(database, "pgflow-cli");
  if (!conn.ok()) return fail(conn.status());
  auto rows = conn->exec(kFlowsQuery);
  if (!rows.ok()) return fail(rows.status());
  const nlohmann::json flows = nlohmann::json::parse(rows->scalar());
  if (as_json) {
    std::printf("%s\n", flows.dump(2).c_str());
    return 0;
  }
  std::printf("%-24s %-5s %-24s %-47s %s\n", "FLOW", "MODE", "STEP", "QUEUE", "LIVE WORKERS");
  for (const auto& flow : flows) {
    const std::string slug = flow["flow_slug"];
    const std::string mode = flow["queue_mode"];
    bool first = true;
    for (const auto& route : flow["routes"]) {
      std::printf("%-24s %-5s %-24s %-47s %lld\n", first ? slug.c_str() : "", first ? mode.c_str() : "",
                  route["step_slug"].get<std::string>().c_str(), route["queue_name"].get<std::string>().c_str(),
                  route["live_workers"].get<long long>());
      first = false;
    }
    if (first) std::printf("%-24s %-5s %-24s\n", slug.c_str(), mode.c_str(), "(no steps)");
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
    if (a.substr(0, 2) != "--") return usage_error("unexpected argument " + std::string(a));
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
  if (!args.database) {
    if (const char* env = std::getenv("DATABASE_URL"); env && *env) args.database = env;
  }

  struct Command {
    std::function<int(const std::string&, const Args&)> run;
    std::vector<std::string> flags;  // besides --database
  };
  const std::map<std::string, Command> commands = {
      {"migrate", {run_migrate, {"to"}}},
      {"status", {run_status, {}}},
      {"flows", {run_flows, {"json"}}},
  };
  auto it = commands.find(command);
  if (it == commands.end()) return usage_error("unknown command " + command);
  for (const auto& [flag, value] : args.flags) {
    const auto& known = it->second.flags;
    if (std::find(known.begin(), known.end(), flag) == known.end()) {
      return usage_error("unknown option --" + flag + " for " + command);
    }
  }
  if (!args.database) return usage_error("no database: pass --database URL or set DATABASE_URL");
  return it->second.run(*args.database, args);
}
