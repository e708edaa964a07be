// A Clock that moves only when a test says so, for worker units tested without waiting.
#ifndef PGFLOW_TESTING_FAKE_CLOCK_H_
#define PGFLOW_TESTING_FAKE_CLOCK_H_

#include <chrono>
#include <set>
#include <stop_token>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "worker/clock.h"

namespace pgflow::testing {

class FakeClock final : public internal::Clock {
 public:
  WallTime wall_now() const override ABSL_LOCKS_EXCLUDED(mu_);
  Time now() const override ABSL_LOCKS_EXCLUDED(mu_);
  // Blocks until the fake time reaches `until` (advance) or `wake` is requested.
  bool sleep_until(Time until, const std::stop_token& wake) const override ABSL_LOCKS_EXCLUDED(mu_);

  // Moves both clocks forward; sleepers whose time came wake up, and have woken (left their
  // sleep) when it returns, so a following wait_for_sleepers sees them sleep again.
  void advance(std::chrono::milliseconds by) ABSL_LOCKS_EXCLUDED(mu_);
  // Waits (real time, at most `timeout`: a guard against hanging, not a speed bound) until at
  // least `n` threads sleep on this clock; false on timeout.
  bool wait_for_sleepers(int n, std::chrono::seconds timeout = std::chrono::seconds(30)) const
      ABSL_LOCKS_EXCLUDED(mu_);

 private:
  mutable absl::Mutex mu_;
  Time now_ ABSL_GUARDED_BY(mu_) = Time() + std::chrono::hours(1);
  WallTime wall_ ABSL_GUARDED_BY(mu_) = WallTime() + std::chrono::hours(24 * 365 * 50);
  mutable int sleepers_ ABSL_GUARDED_BY(mu_) = 0;
  mutable std::multiset<Time> sleeping_until_ ABSL_GUARDED_BY(mu_);
};

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTING_FAKE_CLOCK_H_
