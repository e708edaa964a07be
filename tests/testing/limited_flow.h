// A flow with a global concurrency limit, run by several worker processes at once
// (tests/integration/worker_process_main.cc): each handler appends when it starts and ends to
// a shared log, so the test can tell how many ran at the same moment across processes.
#ifndef PGFLOW_TESTS_TESTING_LIMITED_FLOW_H_
#define PGFLOW_TESTS_TESTING_LIMITED_FLOW_H_

#include <fcntl.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "pgflow/flow.h"

namespace pgflow::testing {

inline constexpr int kLimitedFlowLimit = 5;

// Appends one line in a single write (O_APPEND: lines of concurrent processes never mix).
inline void append_line(const std::string& path, const std::string& line) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT, 0644);
  if (fd < 0) return;
  const std::string text = line + "\n";
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
}

inline long long now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// wLimited: one step `work`, at most kLimitedFlowLimit tasks started at once across all
// workers; a handler logs "start <us> <x>", sleeps `sleep_ms`, logs "end <us> <x>".
inline auto limited_flow(int sleep_ms, std::string log_path) {
  return pgflow::Flow<"wLimited", int>({.timeout = 3})
      .step<"work">({.concurrency_limit = kLimitedFlowLimit}, [sleep_ms, log_path](int x) {
        append_line(log_path, "start " + std::to_string(now_us()) + " " + std::to_string(x));
        std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
        append_line(log_path, "end " + std::to_string(now_us()) + " " + std::to_string(x));
        return x;
      });
}

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_LIMITED_FLOW_H_
