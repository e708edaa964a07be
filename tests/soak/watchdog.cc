#include "watchdog.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>

#include "testing/command.h"

namespace pgflow::soak {

Watchdog::Watchdog(const std::string& source_dir, const std::string& cluster_dir) {
  int ends[2];
  // Close-on-exec: no worker, pg_ctl or server may hold the driver's end open.
  if (pipe2(ends, O_CLOEXEC) != 0) return;
  const std::string remove = source_dir + "/scripts/pgcluster remove " +
                             pgflow::testing::shell_quote(cluster_dir) + " >/dev/null 2>&1";
  const pid_t pid = fork();
  if (pid == 0) {
    close(ends[1]);
    setsid();  // outlives a kill of the driver's process group
    // Holds none of the driver's output pipes (ctest waits for their end).
    const int null = open("/dev/null", O_RDWR);
    for (int fd = 0; fd <= 2; ++fd) dup2(null, fd);
    char said = 0;
    ssize_t n = 0;
    do {
      n = read(ends[0], &said, 1);  // blocks until the driver writes or exits
    } while (n < 0 && errno == EINTR);
    if (n != 1 || said != 'x') {
      [[maybe_unused]] const int ignored = std::system(remove.c_str());
    }
    _exit(0);
  }
  close(ends[0]);
  if (pid > 0)
    pipe_ = ends[1];
  else
    close(ends[1]);
}

Watchdog::~Watchdog() {
  if (pipe_ < 0) return;
  [[maybe_unused]] const ssize_t n = write(pipe_, "x", 1);
  close(pipe_);
}

}  // namespace pgflow::soak
