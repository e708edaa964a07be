// pg::SharedSession: the turns a worker's roles take on a shared connection (no database: the
// operations here never touch the session's connection).
#include "pg/shared_session.h"

#include <atomic>
#include <latch>
#include <mutex>
#include <stop_token>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow::pg {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::wait_for;

SharedSession unconnected() {
  return SharedSession(Session("postgresql://nobody@127.0.0.1:1/never", "test", Logger()));
}

// The holder's turn blocks until `release`; while it lasts, `waiting` more callers queue up.
class Turns : public ::testing::Test {
 protected:
  // Takes the turn on another thread and keeps it until release.count_down().
  void hold() {
    holder_ = std::jthread([this] {
      (void)session_.run(std::stop_token(), [this](Session&) {
        held_.count_down();
        release_.wait();
        return absl::OkStatus();
      });
    });
    held_.wait();
  }

  SharedSession session_ = unconnected();
  std::latch held_{1}, release_{1};
  std::jthread holder_;
};

TEST_F(Turns, CallersGetTheirTurnsInTheOrderTheyCame) {
  hold();
  std::mutex mu;
  std::vector<int> order;
  std::vector<std::jthread> callers;
  for (int i = 0; i < 5; ++i) {
    // One at a time, so that their arrival order is known.
    callers.emplace_back([&, i] {
      (void)session_.run(std::stop_token(), [&, i](Session&) {
        std::lock_guard lock(mu);
        order.push_back(i);
        return absl::OkStatus();
      });
    });
    ASSERT_TRUE(wait_for([&] { return session_.waiting() == i + 1; }));
  }
  release_.count_down();
  callers.clear();  // joins
  EXPECT_THAT(order, ::testing::ElementsAre(0, 1, 2, 3, 4));
}

TEST_F(Turns, AWaitingCallerWhoseStopIsRequestedGivesUpAndTheNextGetsItsTurn) {
  hold();
  std::stop_source stop;
  absl::Status given_up;
  std::jthread impatient([&] {
    given_up = session_.run(stop.get_token(), [](Session&) { return absl::OkStatus(); });
  });
  std::atomic<bool> ran{false};
  std::jthread patient([&] {
    ASSERT_THAT(session_.run(std::stop_token(),
                             [&](Session&) {
                               ran = true;
                               return absl::OkStatus();
                             }),
                IsOk());
  });
  stop.request_stop();
  impatient.join();
  EXPECT_EQ(given_up.code(), absl::StatusCode::kCancelled) << given_up;
  EXPECT_FALSE(ran.load()) << "the holder still has the turn";
  release_.count_down();
  patient.join();
  EXPECT_TRUE(ran.load()) << "the abandoned turn is skipped";
}

TEST_F(Turns, ACallerRetryingThroughAnOutageLeavesTheConnectionToOthersWhileItPauses) {
  // The session's server never answers (connection refused: transient), so the retrying
  // caller tries, pauses (logging each pause) and tries again until stopped.
  std::atomic<int> pauses{0};
  const Logger counting([&](const LogRecord&) { ++pauses; }, LogLevel::kWarn);
  std::stop_source stop_retrying;
  absl::StatusOr<int> retried = 0;
  std::jthread retrying([&] {
    internal::Backoff backoff(std::chrono::milliseconds(100), std::chrono::milliseconds(200));
    retried = session_.retry<int>(stop_retrying.get_token(), "an outage", backoff, counting,
                                  [](Connection&) -> absl::StatusOr<int> { return 1; });
  });
  ASSERT_TRUE(wait_for([&] { return pauses.load() >= 2; }));
  // Another caller gets its turn while the outage lasts: the retrying caller takes a turn for
  // each try, none while it pauses (holding it across pauses would make this call wait for
  // the outage to end).
  std::stop_source give_up;
  std::atomic<bool> ran{false};
  std::jthread other([&] {
    (void)session_.run(give_up.get_token(), [&](Session&) {
      ran = true;
      return absl::OkStatus();
    });
  });
  EXPECT_TRUE(wait_for([&] { return ran.load(); })) << "the retrying caller kept the turn";
  give_up.request_stop();
  other.join();
  stop_retrying.request_stop();
  retrying.join();
  EXPECT_EQ(retried.status().code(), absl::StatusCode::kCancelled) << retried.status();
}

}  // namespace
}  // namespace pgflow::pg
