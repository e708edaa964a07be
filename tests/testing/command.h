// Running programs from tests: pg_dump, psql, the pgflow CLI.
#ifndef PGFLOW_TESTS_TESTING_COMMAND_H_
#define PGFLOW_TESTS_TESTING_COMMAND_H_

#include <string>

namespace pgflow::testing {

// `s` as one single-quoted shell word.
std::string shell_quote(const std::string& s);

struct CommandResult {
  int exit_code = -1;  // -1 when the command did not exit normally
  std::string out;
  std::string err;
};

// Runs a shell command, capturing stdout and stderr.
CommandResult run_command(const std::string& command);

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_COMMAND_H_
