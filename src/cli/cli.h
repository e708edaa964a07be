// The `pgflow` command line: what every command shares. Each *_commands.cc adds its
// subcommands to a CommandSet; main.cc parses the arguments and runs the chosen one.
#ifndef PGFLOW_CLI_CLI_H_
#define PGFLOW_CLI_CLI_H_

#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "CLI/CLI.hpp"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/client.h"

namespace pgflow::cli {

// Exit statuses (docs/operations.md, "Exit statuses").
enum ExitCode : int {
  kOk = 0,
  kFailed = 1,  // the command could not do its job (database error, unknown run, ...)
  kUsage = 2,   // bad arguments; the message names the argument
  kBadOutcome =
      3,  // the command worked and the answer is bad: the run failed, the audit found errors
  kCancelled = 4,     // start --wait: the run was cancelled
  kStillRunning = 5,  // start --wait --timeout: the run had not ended when the wait ran out
};

// Options every command takes.
struct Globals {
  std::string database;    // --database; empty: $DATABASE_URL
  bool json = false;       // --json: machine-readable output on stdout
  bool poll_only = false;  // --poll-only: never LISTEN (a transaction pooler's URL)
};

using Action = std::function<int(const Globals&)>;

// The subcommands and what each runs. Every command gets --database and --json, so
// `pgflow CMD --help` is complete and both options may come anywhere on the line.
class CommandSet {
 public:
  CommandSet(CLI::App& app, Globals& globals);
  // A command `name` under `parent` that runs `action`.
  CLI::App* add(CLI::App* parent, const std::string& name, const std::string& description,
                Action action);
  // A command that only groups subcommands (one of them is required).
  CLI::App* group(const std::string& name, const std::string& description);
  CLI::App& app() { return app_; }
  // What the parsed command line asks for (its innermost subcommand); null for a group.
  const Action* chosen() const;

 private:
  CLI::App& app_;
  Globals& globals_;
  std::map<const CLI::App*, Action> actions_;
};

// Adds --database and --json to `command` (the program and every command take them).
void add_global_options(CLI::App& command, Globals& globals);

void add_schema_commands(CommandSet& commands);  // migrate, status, audit
void add_flow_commands(CommandSet& commands);    // flows, flow show, aliases, activate
void add_run_commands(CommandSet& commands);     // runs, run show|cancel|retry|resume, start
void add_worker_commands(CommandSet& commands);  // workers [pause|resume|deprecate]
void add_prune_command(CommandSet& commands);    // prune

// CLI11 checks, so that bad arguments are exit 2 before anything is sent to the database. Their
// messages name the option and show a refused value only escaped and bounded
// (internal::printable): an argument can be a message body.
// A duration (parse_duration, cli/output.h); the message shows `examples`.
CLI::Validator duration_check(const std::string& examples);
// JSON text (an --input or a --payload).
CLI::Validator json_check();
// A slug or alias (the rules of pgflow/detail/slug.h): no flow or step has any other name.
CLI::Validator slug_check();
// Text of 1 to 255 characters (an idempotency key, a signal id), as the database requires.
CLI::Validator key_check();

// Prints the error (without the library's "pgflow: " prefix, which this adds) and returns kFailed.
int fail(const absl::Status& status);

// A connection to a database with a pgflow schema (kFailedPrecondition naming `pgflow
// migrate` otherwise). Its session speaks UTC, so timestamps in JSON are UTC.
absl::StatusOr<pg::Connection> open_pgflow(const Globals& globals);

// A one-connection client that fails at once when the database is unreachable (an operator
// at a terminal wants the error, not a minute of retries).
absl::StatusOr<Client> connect_client(const Globals& globals);

// Runs a query whose one row and column is JSON text, and parses it.
absl::StatusOr<nlohmann::json> query_json(pg::Connection& conn, std::string_view sql,
                                          const std::vector<pg::Param>& params = {});

// Prints `value` as indented JSON and a newline on stdout.
void print_json(const nlohmann::json& value);

}  // namespace pgflow::cli

#endif  // PGFLOW_CLI_CLI_H_
