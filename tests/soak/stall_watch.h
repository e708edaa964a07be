// What the soak watches while faults run: tasks of *live* workers left to stall recovery, and
// deadlocks. A task a killed worker held waits for stall recovery by design (timeout + 30 s); a
// task of a worker that is still alive must never wait for it: its result is reported once the
// database is back, and a claim whose reply was lost is given back at once (release_claim).
// Every second the watch lists tasks started more than 20 s earlier (the soak flow's handlers
// take milliseconds; stall recovery takes them at 33 s) and keeps those whose worker's process
// is alive, by the worker id each soak worker writes to `DIR/worker-id.<pid>` once started.
#ifndef PGFLOW_TESTS_SOAK_STALL_WATCH_H_
#define PGFLOW_TESTS_SOAK_STALL_WATCH_H_

#include <atomic>
#include <cstdint>
#include <mutex>
#include <set>
#include <string>
#include <thread>

namespace pgflow::soak {

class StallWatch {
 public:
  // Starts watching the database at `url`; worker ids are read from `dir`.
  StallWatch(std::string url, std::string dir);
  ~StallWatch();  // stops watching

  // Tasks (as "run step#index attempt N, worker W") found started for over 20 s under a worker
  // whose process was alive; each counted once.
  std::set<std::string> stalled_under_live_workers() const;

 private:
  void watch();
  void look_once();

  const std::string url_;
  const std::string dir_;
  std::atomic<bool> stopping_{false};
  mutable std::mutex mu_;
  std::set<std::string> found_;  // guarded by mu_
  std::thread thread_;
};

// Lines of the server log that report a deadlock (SQLSTATE 40P01, "deadlock detected").
std::int64_t deadlocks_in_log(const std::string& server_log);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_STALL_WATCH_H_
