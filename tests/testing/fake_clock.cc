#include "testing/fake_clock.h"

#include "absl/time/time.h"

namespace pgflow::testing {

FakeClock::WallTime FakeClock::wall_now() const {
  absl::MutexLock lock(&mu_);
  return wall_;
}

FakeClock::Time FakeClock::now() const {
  absl::MutexLock lock(&mu_);
  return now_;
}

bool FakeClock::sleep_until(Time until, const std::stop_token& wake) const {
  // Unlocking mu_ re-evaluates the wait's condition. Registered before mu_ is taken, since it
  // runs at once when `wake` is already requested.
  std::stop_callback on_wake(wake, [this] { absl::MutexLock lock(&mu_); });
  absl::MutexLock lock(&mu_);
  ++sleepers_;
  const auto mine = sleeping_until_.insert(until);
  auto done = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return wake.stop_requested() || now_ >= until;
  };
  mu_.Await(absl::Condition(&done));
  sleeping_until_.erase(mine);
  --sleepers_;
  return !wake.stop_requested();
}

void FakeClock::advance(std::chrono::milliseconds by) {
  absl::MutexLock lock(&mu_);
  now_ += by;
  wall_ += by;
  auto woken_left = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    return sleeping_until_.empty() || *sleeping_until_.begin() > now_;
  };
  mu_.Await(absl::Condition(&woken_left));
}

bool FakeClock::wait_for_sleepers(int n, std::chrono::seconds timeout) const {
  absl::MutexLock lock(&mu_);
  auto enough = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return sleepers_ >= n; };
  return mu_.AwaitWithTimeout(absl::Condition(&enough), absl::FromChrono(timeout));
}

}  // namespace pgflow::testing
