// Capped exponential backoff with jitter, and a stop-aware sleep.
#ifndef PGFLOW_INTERNAL_BACKOFF_H_
#define PGFLOW_INTERNAL_BACKOFF_H_

#include <chrono>
#include <stop_token>

namespace pgflow::internal {

// Delays double from `initial` up to `max`; each is drawn uniformly from [d/2, d] so that
// many workers recovering from the same outage do not retry in lockstep.
class Backoff {
 public:
  explicit Backoff(std::chrono::milliseconds initial = std::chrono::milliseconds(100),
                   std::chrono::milliseconds max = std::chrono::seconds(10));

  std::chrono::milliseconds next();
  void reset() { current_ = initial_; }

 private:
  std::chrono::milliseconds initial_;
  std::chrono::milliseconds max_;
  std::chrono::milliseconds current_;
};

// Sleeps for `duration` unless `stop` is requested first. Returns false when stopped early.
bool sleep_unless_stopped(std::chrono::milliseconds duration, const std::stop_token& stop);

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_BACKOFF_H_
