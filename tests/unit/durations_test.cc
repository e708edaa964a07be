#include "internal/durations.h"

#include <chrono>

#include "gtest/gtest.h"

namespace pgflow::internal {
namespace {

TEST(AtMostForever, ForeverAddedToNowIsStillInTheFuture) {
  // Unchecked, now() + milliseconds::max() overflows the time point and lands in the past.
  const auto steady = std::chrono::steady_clock::now();
  EXPECT_GT(steady + at_most_forever(std::chrono::milliseconds::max()), steady);
  const auto wall = std::chrono::system_clock::now();
  EXPECT_GT(wall + at_most_forever(std::chrono::milliseconds::max()),
            wall + std::chrono::hours(24 * 365 * 99));
  EXPECT_EQ(at_most_forever(std::chrono::seconds::max()), kForever);
}

TEST(AtMostForever, OrdinaryDurationsAreUnchanged) {
  EXPECT_EQ(at_most_forever(std::chrono::milliseconds(1500)), std::chrono::milliseconds(1500));
  EXPECT_EQ(at_most_forever(std::chrono::milliseconds(-5)), std::chrono::milliseconds(-5));
  EXPECT_EQ(at_most_forever(std::chrono::milliseconds(kForever)),
            std::chrono::milliseconds(kForever));
}

}  // namespace
}  // namespace pgflow::internal
