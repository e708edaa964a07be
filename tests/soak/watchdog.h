// Removes the soak's cluster when the driver dies without removing it itself (killed by a
// ctest timeout or by hand): a process forked at the start, in a session of its own, waits for
// the end of a pipe only the driver holds. Its end comes when the driver exits, however it
// exits; unless the driver said it cleaned up, the watchdog runs `pgcluster remove`.
#ifndef PGFLOW_TESTS_SOAK_WATCHDOG_H_
#define PGFLOW_TESTS_SOAK_WATCHDOG_H_

#include <string>

namespace pgflow::soak {

class Watchdog {
 public:
  // Forks the watchdog. Call before any thread starts (the child is a copy of this process).
  Watchdog(const std::string& source_dir, const std::string& cluster_dir);
  // Tells the watchdog the cluster is gone, then lets it exit.
  ~Watchdog();

 private:
  int pipe_ = -1;  // the driver's (write) end
};

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_WATCHDOG_H_
