#include "testing/command.h"

#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"

namespace pgflow::testing {

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

CommandResult run_command(const std::string& command) {
  CommandResult result;
  char err_path[] = "/tmp/pgflow_test_command_XXXXXX";
  int fd = mkstemp(err_path);
  if (fd < 0) {
    result.err = "mkstemp failed";
    return result;
  }
  close(fd);
  FILE* pipe = popen(absl::StrCat(command, " 2>", err_path).c_str(), "r");
  if (pipe == nullptr) {
    result.err = "popen failed";
    unlink(err_path);
    return result;
  }
  std::array<char, 65536> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0)
    result.out.append(buffer.data(), n);
  int status = pclose(pipe);
  result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream err(err_path);
  std::ostringstream err_text;
  err_text << err.rdbuf();
  result.err = err_text.str();
  unlink(err_path);
  return result;
}

}  // namespace pgflow::testing
