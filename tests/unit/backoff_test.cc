#include "internal/backoff.h"

#include <chrono>
#include <thread>

#include "gtest/gtest.h"

namespace pgflow::internal {
namespace {

using std::chrono::milliseconds;

TEST(Backoff, DelaysGrowAndStayWithinHalfToFullOfTheCappedStep) {
  Backoff b(milliseconds(100), milliseconds(400));
  const long long steps[] = {100, 200, 400, 400, 400};
  for (long long step : steps) {
    long long d = b.next().count();
    EXPECT_GE(d, step / 2);
    EXPECT_LE(d, step);
  }
  b.reset();
  EXPECT_LE(b.next().count(), 100);
}

TEST(SleepUnlessStopped, ReportsAStopRequestedBeforeTheSleep) {
  std::stop_source stop;
  stop.request_stop();
  EXPECT_FALSE(sleep_unless_stopped(std::chrono::hours(1), stop.get_token()));
}

TEST(SleepUnlessStopped, ReportsAStopRequestedDuringTheSleep) {
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(milliseconds(20));
    stop.request_stop();
  });
  // Only the stop request can end this one-hour sleep.
  EXPECT_FALSE(sleep_unless_stopped(std::chrono::hours(1), stop.get_token()));
}

TEST(SleepUnlessStopped, ReportsACompletedSleep) {
  std::stop_source stop;
  EXPECT_TRUE(sleep_unless_stopped(milliseconds(1), stop.get_token()));
  EXPECT_TRUE(sleep_unless_stopped(milliseconds(1), std::stop_token()));
}

}  // namespace
}  // namespace pgflow::internal
