#include "internal/backoff.h"

#include <algorithm>

#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "internal/random.h"

namespace pgflow::internal {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
    : initial_(initial), max_(max), current_(initial) {}

std::chrono::milliseconds Backoff::next() {
  const std::chrono::milliseconds high = std::max(current_, std::chrono::milliseconds(1));
  current_ = std::min(current_ * 2, max_);
  return random_duration(high / 2, high);
}

bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop) {
  absl::Mutex mu;  // guards no data: the wait below is on it
  // Wakes early when a stop is requested: unlocking mu re-evaluates the wait's condition.
  // Registered before mu is taken, since it runs at once if the stop is already requested.
  std::stop_callback wake(stop, [&mu] { absl::MutexLock lock(&mu); });
  auto stopped = [&stop] { return stop.stop_requested(); };
  absl::MutexLock lock(&mu);
  mu.AwaitWithTimeout(absl::Condition(&stopped), absl::FromChrono(duration));
  return !stop.stop_requested();
}

}  // namespace pgflow::internal
