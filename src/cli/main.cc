// pgflow: the operator's command line. `pgflow --help` lists the commands, `pgflow CMD
// --help` their options; docs/operations.md is the guide. The commands live in
// *_commands.cc, one file per thing they act on (schema, flows, runs, workers, history).
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "CLI/CLI.hpp"
#include "cli/cli.h"
#include "internal/text_checks.h"
#include "pg/connection.h"

namespace {

constexpr char kFooter[] = R"(
Every command takes --database URL (default: $DATABASE_URL) and --json (machine-readable
output). Exit status: 0 done; 1 failed (the message says why); 2 bad arguments (the message
names the argument); 3 the answer is bad (start --wait: the run failed; audit: the upgrade
would refuse; status, audit: migrate would refuse the database); 4 start --wait: the run was
cancelled; 5 start --wait --timeout: still running. Guide: docs/operations.md.)";

int usage_error(CLI::App& app, const CLI::ParseError& e) {
  CLI::App* leaf = &app;
  std::string command;
  while (!leaf->get_subcommands().empty()) {
    leaf = leaf->get_subcommands().front();
    command += " " + leaf->get_name();
  }
  // Arguments can be message bodies (an --input's JSON, or one given without its option): what
  // CLI11 quotes of them is shown escaped and bounded.
  // (At most 300 bytes: CLI11's own checks quote the value whole.)
  std::string message = pgflow::internal::escaped(e.what(), 300);
  const std::vector<std::string> extras = app.remaining(/*recurse=*/true);
  if (dynamic_cast<const CLI::ExtrasError*>(&e) != nullptr && !extras.empty()) {
    message = "The following arguments were not expected:";
    for (const std::string& a : extras) message += " " + pgflow::internal::printable(a, 32);
  }
  // CLI11 says only "A subcommand is required" for `pgflow frobnicate`: name what was given.
  const std::vector<std::string> given = leaf->remaining();
  auto extra = std::find_if(given.begin(), given.end(),
                            [](const std::string& a) { return a.rfind('-', 0) != 0; });
  if (leaf->get_require_subcommand_min() > 0 && extra != given.end()) {
    std::string known;
    for (const CLI::App* sub : leaf->get_subcommands([](CLI::App*) { return true; })) {
      known += (known.empty() ? "" : ", ") + sub->get_name();
    }
    message = "unknown command " + pgflow::internal::printable(*extra, 32) + " for pgflow" +
              command + " (one of: " + known + ")";
  }
  std::fprintf(stderr, "pgflow: %s\nRun `pgflow%s --help` for usage.\n", message.c_str(),
               command.c_str());
  return pgflow::cli::kUsage;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("pgflow: install pgflow's SQL core and watch and steer its flows, runs and workers.",
               "pgflow");
  app.footer(kFooter);
  app.require_subcommand(1);
  pgflow::cli::Globals globals;
  pgflow::cli::add_global_options(app, globals);
  pgflow::cli::CommandSet commands(app, globals);
  pgflow::cli::add_schema_commands(commands);
  pgflow::cli::add_flow_commands(commands);
  pgflow::cli::add_run_commands(commands);
  pgflow::cli::add_worker_commands(commands);
  pgflow::cli::add_prune_command(commands);

  if (argc == 1) {
    std::fputs(app.help().c_str(), stderr);
    return pgflow::cli::kUsage;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    return usage_error(app, e);
  }
  std::optional<std::string> database = pgflow::pg::connection_string_or_env(globals.database);
  if (!database) {
    std::fprintf(stderr, "pgflow: %s\n", pgflow::pg::no_database("--database").c_str());
    return pgflow::cli::kUsage;
  }
  globals.database = *database;
  int code = pgflow::cli::kFailed;
  try {
    code = (*commands.chosen())(globals);
  } catch (const std::exception& e) {
    // A bug, but an exit with a message rather than an abort (what() escaped and bounded: it
    // can quote a value).
    std::fprintf(stderr, "pgflow: unexpected error: %s\n",
                 pgflow::internal::printable(e.what(), 200).c_str());
  }
  // Output that could not be written (a full disk, a closed pipe) is a failure: a script's
  // `pgflow ... > file.tmp && mv file.tmp file` must not install a truncated file.
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    std::fprintf(stderr, "pgflow: could not write the output: %s\n", std::strerror(errno));
    return pgflow::cli::kFailed;
  }
  return code;
}
