#include "worker/clock.h"

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace pgflow::internal {
namespace {

class SystemClock final : public Clock {
 public:
  WallTime wall_now() const override { return std::chrono::system_clock::now(); }
  Time now() const override { return std::chrono::steady_clock::now(); }
  bool sleep_until(Time until, const std::stop_token& wake) const override {
    absl::Mutex mu;  // guards no data: the wait below is on it
    // Unlocking mu re-evaluates the wait's condition. Registered before mu is taken, since it
    // runs at once when `wake` is already requested.
    std::stop_callback on_wake(wake, [&mu] { absl::MutexLock lock(&mu); });
    auto woken = [&wake] { return wake.stop_requested(); };
    absl::MutexLock lock(&mu);
    if (until == Time::max()) {
      mu.Await(absl::Condition(&woken));
    } else {
      mu.AwaitWithTimeout(absl::Condition(&woken), absl::FromChrono(until - now()));
    }
    return !wake.stop_requested();
  }
};

}  // namespace

const Clock& system_clock() {
  static const SystemClock clock;
  return clock;
}

}  // namespace pgflow::internal
