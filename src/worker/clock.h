// Time as a dependency of the worker: what time it is, and waiting until a time unless
// something else happens first. The worker reads time only through a Clock, so its units are
// tested with a fake one (tests/testing/fake_clock.h) that moves only when a test says so.
#ifndef PGFLOW_WORKER_CLOCK_H_
#define PGFLOW_WORKER_CLOCK_H_

#include <chrono>
#include <stop_token>
#include <thread>
#include <utility>

namespace pgflow::internal {

class Clock {
 public:
  using WallTime = std::chrono::system_clock::time_point;  // what handlers see (Context::deadline)
  using Time = std::chrono::steady_clock::time_point;      // what the worker's timers use

  virtual ~Clock() = default;
  virtual WallTime wall_now() const = 0;
  virtual Time now() const = 0;
  // Blocks until `until` or until `wake` is requested, whichever comes first; false when woken.
  // Time::max() waits for `wake` alone.
  virtual bool sleep_until(Time until, const std::stop_token& wake) const = 0;

  bool sleep_for(std::chrono::milliseconds duration, const std::stop_token& wake) const {
    return sleep_until(now() + duration, wake);
  }

  // Calls `op` with a stop token requested once `limit` has passed: the bound of a last act,
  // such as a stopping worker's final database calls.
  template <typename Op>
  decltype(auto) within(std::chrono::milliseconds limit, Op&& op) const {
    std::stop_source passed;
    std::jthread timer([this, limit, &passed](const std::stop_token& t) {
      if (sleep_for(limit, t)) passed.request_stop();
    });
    return std::forward<Op>(op)(passed.get_token());
  }
};

// The real clocks of the machine.
const Clock& system_clock();

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_CLOCK_H_
