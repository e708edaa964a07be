#include "pg/startup_retry.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"
#include "internal/backoff.h"
#include "internal/durations.h"
#include "internal/strings.h"
#include "pg/error.h"

namespace pgflow::pg {

absl::Status retry_while_unreachable(
    std::chrono::milliseconds timeout, std::string_view timeout_name,
    const std::function<absl::Status(int attempt)>& attempt,
    const std::function<void(const absl::Status& error, int attempt,
                             std::chrono::milliseconds delay)>& on_retry) {
  using Clock = std::chrono::steady_clock;
  const Clock::time_point deadline = Clock::now() + internal::at_most_forever(timeout);
  internal::Backoff backoff;
  for (int n = 1;; ++n) {
    absl::Status status = attempt(n);
    if (status.ok() || !is_transient(status)) return status;
    const Clock::time_point now = Clock::now();
    if (now >= deadline) {
      if (timeout.count() == 0) return status;
      return with_message(
          status, absl::StrCat(status.message(), " (the database stayed unreachable for the ",
                               internal::absl_view(timeout_name), " of ", timeout.count(), " ms, ",
                               n, " attempts)"));
    }
    const auto delay = std::min(
        backoff.next(), std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now) +
                            std::chrono::milliseconds(1));
    if (on_retry) on_retry(status, n, delay);
    std::this_thread::sleep_for(delay);
  }
}

}  // namespace pgflow::pg
