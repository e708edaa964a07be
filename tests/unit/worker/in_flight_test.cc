// InFlight without a database or a clock: slots, the deadline index, stop causes, and that
// stop callbacks (user code) never run under its lock.
#include "worker/in_flight.h"

#include <atomic>
#include <chrono>
#include <latch>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace pgflow::internal {
namespace {

using std::chrono::seconds;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

const Clock::Time kT0 = Clock::Time() + std::chrono::hours(1);

TaskRef task(const std::string& run) { return {.run_id = run, .step_slug = "s", .task_index = 0}; }

std::vector<std::string> runs(const std::vector<StoppedTask>& stopped) {
  std::vector<std::string> out;
  for (const StoppedTask& s : stopped) out.push_back(s.task.run_id);
  return out;
}

TEST(InFlight, SlotsBoundWhatMayBeClaimedAndAReleaseFreesOne) {
  InFlight f(3);
  EXPECT_EQ(f.wait_for_slots(10), 3);
  EXPECT_EQ(f.wait_for_slots(2), 2) << "never more than asked";
  const auto a = f.add(task("a"), 60, kT0 + seconds(60));
  f.add(task("b"), 60, kT0 + seconds(60));
  f.add(task("c"), 60, kT0 + seconds(60));
  EXPECT_EQ(f.count(), 3);

  std::atomic<int> freed{-1};
  std::thread poller([&] { freed = f.wait_for_slots(10); });
  f.returned(a.id);  // the handler returned; its result is not reported yet: still in flight
  EXPECT_EQ(f.count(), 3);
  f.release(a.id);
  poller.join();
  EXPECT_EQ(freed, 1) << "back-pressure: one slot free, one task may be claimed";
}

TEST(InFlight, DeadlinesFireInOrderAndEachOnce) {
  InFlight f(10);
  const auto late = f.add(task("late"), 30, kT0 + seconds(30));
  const auto early = f.add(task("early"), 10, kT0 + seconds(10));
  const auto middle = f.add(task("middle"), 20, kT0 + seconds(20));
  EXPECT_EQ(f.next_deadline().at, kT0 + seconds(10));

  EXPECT_THAT(f.fire_deadlines(kT0 + seconds(5)), IsEmpty());
  EXPECT_THAT(runs(f.fire_deadlines(kT0 + seconds(25))), ElementsAre("early", "middle"));
  EXPECT_TRUE(early.stop.stop_requested());
  EXPECT_TRUE(middle.stop.stop_requested());
  EXPECT_FALSE(late.stop.stop_requested());
  EXPECT_THAT(runs(f.fire_deadlines(kT0 + seconds(25))), IsEmpty()) << "fired once";
  EXPECT_THAT(runs(f.fire_deadlines(kT0 + seconds(60))), ElementsAre("late"));
  EXPECT_EQ(f.next_deadline().at, Clock::Time::max());
  EXPECT_TRUE(f.returned(early.id).timed_out);
}

TEST(InFlight, AnEarlierDeadlineWakesTheTimerALaterOneDoesNot) {
  InFlight f(10);
  f.add(task("a"), 20, kT0 + seconds(20));
  const InFlight::NextDeadline waiting = f.next_deadline();
  f.add(task("b"), 30, kT0 + seconds(30));
  EXPECT_FALSE(waiting.earlier.stop_requested());
  f.add(task("c"), 10, kT0 + seconds(10));
  EXPECT_TRUE(waiting.earlier.stop_requested());
  EXPECT_EQ(f.next_deadline().at, kT0 + seconds(10));
  EXPECT_FALSE(f.next_deadline().earlier.stop_requested()) << "a fresh token for the next wait";
}

TEST(InFlight, TheFirstStopCauseWins) {
  InFlight f(10);
  // Deadline, then the database ends the task: a timeout, and not reported.
  const auto a = f.add(task("a"), 1, kT0 + seconds(1));
  f.fire_deadlines(kT0 + seconds(2));
  f.stop_unwanted({a.id});
  const HandlerEnding ea = f.returned(a.id);
  EXPECT_TRUE(ea.timed_out);
  EXPECT_TRUE(ea.unwanted);
  // Unwanted, then the deadline: no timeout.
  const auto b = f.add(task("b"), 1, kT0 + seconds(1));
  f.stop_unwanted({b.id});
  EXPECT_THAT(f.fire_deadlines(kT0 + seconds(2)), IsEmpty());
  EXPECT_FALSE(f.returned(b.id).timed_out);
  // The worker stops, then the deadline passes: no timeout.
  InFlight g(10);
  const auto c = g.add(task("c"), 1, kT0 + seconds(1));
  g.stop_all();
  EXPECT_TRUE(c.stop.stop_requested());
  EXPECT_THAT(g.fire_deadlines(kT0 + seconds(2)), IsEmpty());
  EXPECT_EQ(g.returned(c.id).timed_out, false);
  // Returned first: nothing fires afterwards, and the task is not asked about any more.
  const auto d = f.add(task("d"), 1, kT0 + seconds(1));
  EXPECT_FALSE(f.returned(d.id).timed_out);
  EXPECT_THAT(f.fire_deadlines(kT0 + seconds(2)), IsEmpty());
  EXPECT_FALSE(d.stop.stop_requested());
  EXPECT_THAT(f.stop_unwanted({d.id}), IsEmpty());
  EXPECT_FALSE(f.returned(d.id).unwanted);
}

TEST(InFlight, UnwantedTasksAreStoppedAndOnlyRunningOnesAreAskedAbout) {
  InFlight f(10);
  const auto a = f.add(task("a"), 60, kT0 + seconds(60));
  const auto b = f.add(task("b"), 60, kT0 + seconds(60));
  const auto c = f.add(task("c"), 60, kT0 + seconds(60));
  f.returned(c.id);
  std::vector<std::string> asked;
  for (const TaskRef& t : f.running()) asked.push_back(t.run_id);
  EXPECT_THAT(asked, ElementsAre("a", "b"));
  const std::vector<TaskRef> stopped = f.stop_unwanted({b.id, c.id, 999});
  ASSERT_EQ(stopped.size(), 1u);
  EXPECT_EQ(stopped[0].run_id, "b");
  EXPECT_TRUE(b.stop.stop_requested());
  EXPECT_FALSE(a.stop.stop_requested());
  EXPECT_TRUE(f.returned(b.id).unwanted);
}

TEST(InFlight, AWorkerStopFiresEveryTokenAndTasksAddedAfterItAtOnce) {
  InFlight f(10);
  const auto a = f.add(task("a"), 60, kT0 + seconds(60));
  const InFlight::NextDeadline timer = f.next_deadline();
  f.stop_all();
  EXPECT_TRUE(a.stop.stop_requested());
  EXPECT_TRUE(timer.earlier.stop_requested()) << "the deadline timer ends";
  EXPECT_EQ(f.wait_for_slots(10), 0) << "no more claims";
  const auto late = f.add(task("late"), 60, kT0 + seconds(60));
  EXPECT_TRUE(late.stop.stop_requested());
}

TEST(InFlight, StoppingClaimsEndsClaimsAndStopsNoTask) {
  InFlight f(1);
  const auto a = f.add(task("a"), 10, kT0 + seconds(10));
  std::atomic<int> freed{-1};
  std::thread poller([&] { freed = f.wait_for_slots(10); });  // full: it waits
  const InFlight::NextDeadline timer = f.next_deadline();
  EXPECT_FALSE(timer.claims_stopped);
  f.stop_claims();
  poller.join();
  EXPECT_EQ(freed, 0) << "a waiting claim ends";
  EXPECT_EQ(f.wait_for_slots(10), 0) << "and no claim starts";
  EXPECT_FALSE(a.stop.stop_requested()) << "the task held runs on";
  EXPECT_TRUE(timer.earlier.stop_requested()) << "the deadline timer wakes to see it";
  const InFlight::NextDeadline draining = f.next_deadline();
  EXPECT_TRUE(draining.claims_stopped);
  EXPECT_FALSE(draining.stopping);
  EXPECT_FALSE(draining.earlier.stop_requested()) << "a fresh token for the next wait";
  const auto late = f.add(task("late"), 60, kT0 + seconds(60));  // a claim under way
  EXPECT_FALSE(late.stop.stop_requested()) << "a task claimed just before runs normally too";
  EXPECT_THAT(runs(f.fire_deadlines(kT0 + seconds(10))), ElementsAre("a"))
      << "deadlines still fire";

  f.no_more_tasks();
  f.returned(a.id);
  f.release(a.id);
  const InFlight::NextDeadline last = f.next_deadline();
  EXPECT_FALSE(last.drained);
  f.returned(late.id);
  f.release(late.id);
  EXPECT_TRUE(last.earlier.stop_requested()) << "draining wakes the timer";
  EXPECT_TRUE(f.next_deadline().drained);
  EXPECT_TRUE(f.drained().stop_requested());
  EXPECT_FALSE(f.next_deadline().stopping);
}

TEST(InFlight, DrainedFiresWhenNoTaskCanComeAndTheLastSlotIsReleased) {
  InFlight f(10);
  const auto a = f.add(task("a"), 60, kT0 + seconds(60));
  f.release(a.id);
  EXPECT_FALSE(f.drained().stop_requested()) << "not stopping";
  const auto b = f.add(task("b"), 60, kT0 + seconds(60));
  f.stop_all();
  f.no_more_tasks();
  EXPECT_FALSE(f.drained().stop_requested());
  f.returned(b.id);
  EXPECT_FALSE(f.drained().stop_requested()) << "its result is not queued yet";
  f.release(b.id);
  EXPECT_TRUE(f.drained().stop_requested());

  InFlight idle(10);
  idle.stop_all();
  idle.no_more_tasks();
  EXPECT_TRUE(idle.drained().stop_requested());
}

// A claim under way when the worker stops may still hand out tasks: an idle worker is not
// drained until the poller has ended, or the late task's result would never be reported.
TEST(InFlight, ATaskAddedAfterTheStopKeepsTheWorkerFromDraining) {
  InFlight f(10);
  f.stop_all();
  EXPECT_FALSE(f.drained().stop_requested()) << "a claim may still be under way";
  const auto late = f.add(task("late"), 60, kT0 + seconds(60));
  f.no_more_tasks();
  EXPECT_FALSE(f.drained().stop_requested()) << "the late task holds its slot";
  f.returned(late.id);
  f.release(late.id);
  EXPECT_TRUE(f.drained().stop_requested());
}

// A stop callback is user code: it may block for long or call back into the worker. It runs
// after InFlight unlocked, so neither deadlocks nor holds up other tasks.
TEST(InFlight, StopCallbacksRunOutsideTheLockForEveryCause) {
  struct Cause {
    const char* name;
    std::function<void(InFlight&, std::uint64_t)> fire;
  };
  const std::vector<Cause> causes = {
      {"worker stop", [](InFlight& f, std::uint64_t) { f.stop_all(); }},
      {"unwanted", [](InFlight& f, std::uint64_t id) { f.stop_unwanted({id}); }},
      {"deadline", [](InFlight& f, std::uint64_t) { f.fire_deadlines(kT0 + seconds(2)); }},
  };
  for (const Cause& cause : causes) {
    SCOPED_TRACE(cause.name);
    InFlight f(10);
    const auto slow = f.add(task("slow"), 1, kT0 + seconds(1));
    std::latch in_callback(1), release(1);
    std::atomic<int> seen_running{-1};
    std::stop_callback callback(slow.stop, [&] {
      seen_running = static_cast<int>(f.running().size());  // calls back into InFlight
      in_callback.count_down();
      release.wait();  // and takes as long as it likes
    });
    std::thread firing([&] { cause.fire(f, slow.id); });
    in_callback.wait();
    // Meanwhile the other units carry on.
    const auto other = f.add(task("other"), 60, kT0 + seconds(60));
    EXPECT_GE(f.count(), 2);
    f.returned(other.id);
    f.release(other.id);
    release.count_down();
    firing.join();
    EXPECT_EQ(seen_running, 1);
  }
}

}  // namespace
}  // namespace pgflow::internal
