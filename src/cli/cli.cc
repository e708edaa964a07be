#include "cli/cli.h"

#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/output.h"
#include "cli/statements.h"
#include "internal/status_macros.h"
#include "internal/text_checks.h"

namespace pgflow::cli {

CommandSet::CommandSet(CLI::App& app, Globals& globals) : app_(app), globals_(globals) {}

void add_global_options(CLI::App& command, Globals& globals) {
  command.add_option(
      "--database,-d", globals.database,
      "libpq connection string or URL (default: the DATABASE_URL environment variable)");
  command.add_flag("--json", globals.json, "machine-readable output (JSON on stdout)");
  command.add_flag("--poll-only", globals.poll_only,
                   "never LISTEN: waits re-read the run (for a transaction pooler's URL, "
                   "docs/deploying-at-scale.md)");
}

CLI::App* CommandSet::add(CLI::App* parent, const std::string& name, const std::string& description,
                          Action action) {
  CLI::App* command = parent->add_subcommand(name, description);
  add_global_options(*command, globals_);
  // A command with subcommands of its own (`workers pause`) runs one of them at most: CLI11
  // would otherwise parse `workers pause A resume A` as two and chosen() run the first alone.
  command->require_subcommand(0, 1);
  actions_.emplace(command, std::move(action));
  return command;
}

CLI::App* CommandSet::group(const std::string& name, const std::string& description) {
  CLI::App* command = app_.add_subcommand(name, description);
  add_global_options(*command, globals_);
  command->require_subcommand(1);
  return command;
}

const Action* CommandSet::chosen() const {
  const CLI::App* leaf = &app_;
  while (!leaf->get_subcommands().empty()) leaf = leaf->get_subcommands().front();
  auto it = actions_.find(leaf);
  return it == actions_.end() ? nullptr : &it->second;
}

CLI::Validator duration_check(const std::string& examples) {
  return CLI::Validator(
      [examples](std::string& v) -> std::string {
        return parse_duration(v) ? "" : "not a duration (" + examples + "): " + v;
      },
      "DURATION");
}

int fail(const absl::Status& status) {
  std::string message(status.message());
  if (message.rfind("pgflow: ", 0) == 0) message.erase(0, 8);
  // (Line breaks of multi-line messages stay; everything else that could drive a terminal, e.g.
  // from a name in the database, is escaped.)
  std::vector<std::string> lines = absl::StrSplit(message, '\n');
  for (std::string& line : lines) line = internal::escaped(line);
  std::fprintf(stderr, "pgflow: %s\n", absl::StrJoin(lines, "\n").c_str());
  return kFailed;
}

absl::StatusOr<pg::Connection> open_pgflow(const Globals& globals) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn,
                          pg::Connection::open(globals.database, "pgflow-cli"));
  PGFLOW_RETURN_IF_ERROR(pg::require_pgflow_schema(conn));
  PGFLOW_RETURN_IF_ERROR(conn.exec(kUtc).status());
  return conn;
}

absl::StatusOr<Client> connect_client(const Globals& globals) {
  return Client::connect({.connection_string = globals.database,
                          .poll_only = globals.poll_only,
                          .max_connections = 1,
                          .connect_timeout = std::chrono::milliseconds(0)});
}

absl::StatusOr<nlohmann::json> query_json(pg::Connection& conn, std::string_view sql,
                                          const std::vector<pg::Param>& params) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Result rows, conn.exec(sql, params));
  if (rows.rows() != 1 || rows.is_null(0, 0))
    return absl::InternalError("the query returned no JSON");
  return nlohmann::json::parse(rows.scalar());
}

void print_json(const nlohmann::json& value) {
  std::printf("%s\n", value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace pgflow::cli
