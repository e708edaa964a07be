#include "internal/backoff.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>

namespace pgflow::internal {

Backoff::Backoff(std::chrono::milliseconds initial, std::chrono::milliseconds max)
    : initial_(initial), max_(max), current_(initial), random_(std::random_device{}()) {}

std::chrono::milliseconds Backoff::next() {
  const auto high = current_.count();
  std::uniform_int_distribution<long long> pick(high / 2, std::max<long long>(high, 1));
  current_ = std::min(current_ * 2, max_);
  return std::chrono::milliseconds(pick(random_));
}

bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop) {
  std::mutex mu;
  std::condition_variable_any cv;
  std::unique_lock<std::mutex> lock(mu);
  // Wakes early when a stop is requested (the stop_token overload notifies the wait).
  cv.wait_for(lock, stop, duration, [&stop] { return stop.stop_requested(); });
  return !stop.stop_requested();
}

}  // namespace pgflow::internal
