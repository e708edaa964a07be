#include "cli/cli.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "cli/output.h"
#include "cli/statements.h"
#include "internal/status_macros.h"
#include "internal/text_checks.h"
#include "pgflow/detail/slug.h"

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
        return parse_duration(v) ? ""
                                 : "not a duration from 1 microsecond to 100 years (" + examples +
                                       "): " + internal::printable(v);
      },
      "DURATION");
}

CLI::Validator json_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        try {
          const nlohmann::json parsed = nlohmann::json::parse(v);  // throws what it cannot read
          static_cast<void>(parsed);
          return "";
        } catch (const nlohmann::json::parse_error& e) {
          // (Not e.what(): it quotes the text it stopped at.)
          return absl::StrCat("not valid JSON (at byte ", e.byte, "): ", internal::printable(v));
        } catch (const nlohmann::json::exception&) {
          return "not JSON this program can read (a number beyond the range of a double?): " +
                 internal::printable(v);
        }
      },
      "JSON");
}

CLI::Validator slug_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        const char* rule = detail::slug_error(v);
        return rule ? absl::StrCat("not a slug: ", internal::printable(v), ": ", rule) : "";
      },
      "SLUG");
}

CLI::Validator key_check() {
  return CLI::Validator(
      [](std::string& v) -> std::string {
        // Characters as PostgreSQL counts them in UTF-8: the bytes that begin one.
        const auto characters = std::count_if(v.begin(), v.end(), [](char c) {
          return (static_cast<unsigned char>(c) & 0xC0) != 0x80;
        });
        return characters >= 1 && characters <= 255
                   ? ""
                   : absl::StrCat("must be 1 to 255 characters, not ", characters);
      },
      "TEXT");
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
  nlohmann::json j = nlohmann::json::parse(rows.scalar(), nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) {
    return absl::InternalError(
        "the database holds JSON this program cannot read (a number beyond the range of a "
        "double, or text that is not UTF-8); read it with psql");
  }
  return j;
}

void print_json(const nlohmann::json& value) {
  std::printf("%s\n", value.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
}

}  // namespace pgflow::cli
