// Durations a caller may pass for "forever" (std::chrono::milliseconds::max()): added to a
// clock's now() they would overflow its time point and wrap into the past, so a wait meant to
// last forever would end at once.
#ifndef PGFLOW_INTERNAL_DURATIONS_H_
#define PGFLOW_INTERNAL_DURATIONS_H_

#include <chrono>

namespace pgflow::internal {

// Longer than any wait this library does; short enough for every clock it adds to.
inline constexpr std::chrono::hours kForever{24 * 365 * 100};

// `d`, capped at kForever: safe to add to a steady_clock or system_clock time point.
template <class Rep, class Period>
constexpr std::chrono::duration<Rep, Period> at_most_forever(std::chrono::duration<Rep, Period> d) {
  return d > kForever ? std::chrono::duration_cast<std::chrono::duration<Rep, Period>>(kForever)
                      : d;
}

}  // namespace pgflow::internal

#endif  // PGFLOW_INTERNAL_DURATIONS_H_
