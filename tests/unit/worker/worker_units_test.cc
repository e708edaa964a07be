// The worker's units wired together on a fake store and a fake clock: no PostgreSQL, and time
// moves only when a test moves it. The integration tests (tests/integration/worker_test.cc and
// friends) are the behaviour contract against the real database; these pin the parts that
// need control over time and failures: deadlines, stop causes, the stop sequence, a fatal
// claim, unwanted tasks, heartbeats and stall recovery.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <latch>
#include <map>
#include <memory>
#include <optional>
#include <semaphore>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/context.h"
#include "testing/fake_clock.h"
#include "testing/fake_store.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"
#include "worker/worker.h"

namespace pgflow::internal {
namespace {

using pgflow::testing::FakeClock;
using pgflow::testing::FakeDatabase;
using pgflow::testing::IsOk;
using pgflow::testing::LogRecorder;
using pgflow::testing::StatusIs;
using std::chrono::milliseconds;
using std::chrono::seconds;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A one-step flow whose handler the test supplies.
FlowDefinition flow_with(StepHandler handler) {
  FlowDefinition flow{.slug = "units"};
  flow.steps.push_back(StepDefinition{.slug = "s", .handler = std::move(handler)});
  return flow;
}

class WorkerUnits : public ::testing::Test {
 protected:
  WorkerConfig config() {
    WorkerConfig c;
    c.connection_string = "fake";
    c.function_name = "units-worker";
    c.max_concurrent = 4;
    c.poll_interval = milliseconds(1000);
    c.heartbeat_interval = milliseconds(5000);
    c.stall_recovery_interval = milliseconds(0);
    c.stop_grace_period = seconds(30);
    c.log_level = LogLevel::kDebug;
    c.log_sink = logs_.sink();
    return c;
  }
  std::unique_ptr<Worker> start(StepHandler handler, WorkerConfig c) {
    FlowDefinition flow = flow_with(std::move(handler));
    auto worker = std::make_unique<Worker>(flow, std::move(c), std::vector<StepRoute>{},
                                           pgflow::testing::fake_stores(db_), clock_);
    EXPECT_THAT(worker->start(), IsOk());
    return worker;
  }
  std::unique_ptr<Worker> start(StepHandler handler) { return start(std::move(handler), config()); }
  // config(), counting the results dropped because their tasks were no longer wanted.
  WorkerConfig config_counting_drops(std::atomic<int>& dropped) {
    WorkerConfig c = config();
    c.metrics = [&dropped](const WorkerMetric& m) {
      if (m.kind == WorkerMetric::Kind::kDropped) ++dropped;
    };
    return c;
  }

  // A handler that counts `running` down, then returns once its stop token fires, setting
  // `stopped`.
  static StepHandler until_stopped(std::latch& running, std::atomic<bool>& stopped) {
    return [&running, &stopped](const nlohmann::json&,
                                Context& ctx) -> absl::StatusOr<nlohmann::json> {
      std::latch stop_seen(1);
      std::stop_callback on_stop(ctx.stop_token(), [&] { stop_seen.count_down(); });
      running.count_down();
      stop_seen.wait();
      stopped = true;
      return "whatever";
    };
  }

  // Advances the fake clock by `total` in 10 ms steps, each once the poller, maintenance and
  // supervisor all sleep (so whatever falls due on the way runs in order); stops early once
  // `done` holds. Call it under ASSERT_NO_FATAL_FAILURE.
  void advance_in_steps(
      milliseconds total, const std::function<bool()>& done = [] { return false; }) {
    for (milliseconds t{0}; t < total && !done(); t += milliseconds(10)) {
      ASSERT_TRUE(clock_.wait_for_sleepers(3));
      clock_.advance(milliseconds(10));
    }
  }

  FakeClock clock_;
  FakeDatabase db_{clock_};
  LogRecorder logs_;
};

TEST_F(WorkerUnits, RunsClaimedTasksAndReportsTheirResults) {
  auto worker = start([](const nlohmann::json& input, Context&) -> absl::StatusOr<nlohmann::json> {
    if (input.value("fail", false)) return absl::InternalError("boom");
    return input["n"];
  });
  db_.add_task("r1", "s", 60, {{"n", 1}});
  db_.add_task("r2", "s", 60, {{"fail", true}});
  ASSERT_TRUE(db_.wait_for_reported(2));
  std::map<std::string, std::string> results;
  for (const TaskResult& r : db_.reported())
    results[r.run_id] = r.ok ? r.output.dump() : r.error_message;
  EXPECT_EQ(results["r1"], "1");
  EXPECT_EQ(results["r2"], "boom");
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  EXPECT_TRUE(db_.marked_stopped());
}

// The database returns every reported task, also those a report did not change (a late
// result's), with their unchanged status. A status a report of its kind cannot give is not
// counted: a completion found queued again (stall recovery took the task back) is no retry, a
// failure found completed (another attempt completed it) no completion. A completion that
// failed the task (a type violation) counts as a failure.
TEST_F(WorkerUnits, OnlyStatusesAReportCanGiveAreCounted) {
  std::map<std::string, int> counted;
  absl::Mutex mu;
  WorkerConfig c = config();
  c.metrics = [&](const WorkerMetric& m) {
    absl::MutexLock lock(&mu);
    if (m.kind == WorkerMetric::Kind::kCompleted) ++counted["completed"];
    if (m.kind == WorkerMetric::Kind::kRetried) ++counted["retried"];
    if (m.kind == WorkerMetric::Kind::kFailed) ++counted["failed"];
  };
  auto worker = start(
      [](const nlohmann::json& input, Context&) -> absl::StatusOr<nlohmann::json> {
        if (input.value("fail", false)) return absl::InternalError("boom");
        return 1;
      },
      c);
  db_.answer_reports_of("requeued", "queued");
  db_.answer_reports_of("completed-elsewhere", "completed");
  db_.answer_reports_of("type-violation", "failed");
  db_.answer_reports_of("retried", "queued");
  db_.add_task("requeued", "s");
  db_.add_task("completed-elsewhere", "s", 60, {{"fail", true}});
  db_.add_task("type-violation", "s");
  db_.add_task("retried", "s", 60, {{"fail", true}});
  ASSERT_TRUE(db_.wait_for_reported(4));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  absl::MutexLock lock(&mu);
  EXPECT_EQ(counted["completed"], 0);
  EXPECT_EQ(counted["retried"], 1) << "only the failure answered queued";
  EXPECT_EQ(counted["failed"], 1) << "the completion that failed its task";
}

// The stop can come while a claim's reply is on its way (the database has started the task):
// the task it hands out after the stop runs, and the worker waits for its result and reports
// it. (It once counted as drained before the late task arrived and exited without reporting,
// leaving the task to stall recovery; seen as a flaky WorkerProcessTest in CI.)
TEST_F(WorkerUnits, ATaskClaimedAsTheWorkerStopsIsRunAndReported) {
  auto worker = start([&](const nlohmann::json& input, Context&) -> absl::StatusOr<nlohmann::json> {
    // Returns only after the stop sequence has started waiting for handlers.
    EXPECT_TRUE(logs_.wait_for_text("stopping: waiting for in-flight handlers"));
    return input["n"];
  });
  db_.hold_next_claim_until_stop();
  db_.add_task("late", "s", 60, {{"n", 7}});
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.claims_held() == 1; }));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  ASSERT_EQ(db_.reported().size(), 1u);
  EXPECT_EQ(db_.reported()[0].run_id, "late");
  EXPECT_EQ(db_.reported()[0].output, 7);
  EXPECT_TRUE(db_.marked_stopped());
}

TEST_F(WorkerUnits, ClaimsNeverAskForMoreThanTheFreeSlots) {
  std::atomic<int> running{0};
  std::counting_semaphore<6> release(0);
  auto worker = start([&](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> {
    ++running;
    release.acquire();
    --running;
    return nullptr;
  });
  for (int i = 0; i < 6; ++i) db_.add_task(absl::StrCat("r", i), "s");
  // Four handlers block: every slot is taken, and the poller waits for one (back-pressure).
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return running.load() == 4; }));
  // Handlers end one at a time: each frees one slot, and the claim after it asks for one task.
  for (int freed = 0; freed < 2; ++freed) {
    const std::size_t before = db_.claims().size();
    release.release();
    ASSERT_TRUE(pgflow::testing::wait_for(
        [&] { return db_.claims().size() > before && running.load() == 4; }));
    EXPECT_EQ(db_.claims()[before].slots, 1) << "the claim after handler " << freed << " ended";
  }
  release.release(4);
  ASSERT_TRUE(db_.wait_for_reported(6));
  for (const ClaimRequest& claim : db_.claims()) EXPECT_LE(claim.slots, 4);
}

TEST_F(WorkerUnits, ADeadlineStopsTheHandlerAndItsFailureIsATimeout) {
  std::latch started(1);
  auto worker = start([&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    started.count_down();
    std::latch stopped(1);
    std::stop_callback on_stop(ctx.stop_token(), [&] { stopped.count_down(); });
    stopped.wait();
    return absl::CancelledError("asked to stop");
  });
  db_.add_task("slow", "s", /*timeout_seconds=*/10);
  started.wait();  // claimed: its deadline is 10 s from now
  clock_.advance(seconds(9));
  clock_.advance(seconds(2));
  ASSERT_TRUE(db_.wait_for_reported(1));
  const TaskResult r = db_.reported()[0];
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error_message, "step 's' exceeded its timeout of 10 s (handler: asked to stop)");
}

// A handler's ctx.flow_input() that waits for the database (or for another handler's load that
// does) ends with the task: at its deadline here, not only when the worker stops.
TEST_F(WorkerUnits, ALoadOfTheRunInputEndsWithItsTask) {
  std::latch started(2), load(1);
  std::atomic<int> cancelled{0};
  WorkerConfig c = config();
  c.max_concurrent = 2;
  auto worker = start(
      [&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
        started.count_down();
        load.wait();
        absl::StatusOr<nlohmann::json> input = ctx.flow_input<nlohmann::json>();
        if (input.status().code() == absl::StatusCode::kCancelled) ++cancelled;
        return input;
      },
      c);
  db_.add_task("a", "s", /*timeout_seconds=*/10);
  db_.add_task("b", "s", /*timeout_seconds=*/10);
  started.wait();  // both claimed, with no run input: they load it
  db_.set_down(true);
  load.count_down();  // one loads (and waits for the database), the other waits for that load
  clock_.advance(seconds(11));
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return cancelled.load() == 2; }))
      << "both ended at their deadline: " << cancelled.load();
  db_.set_down(false);
  ASSERT_TRUE(db_.wait_for_reported(2));
  for (const TaskResult& r : db_.reported()) {
    EXPECT_FALSE(r.ok);
    EXPECT_THAT(r.error_message, HasSubstr("exceeded its timeout of 10 s"));
  }
}

TEST_F(WorkerUnits, AResultThatArrivesAfterTheDeadlineStillCompletesTheTask) {
  std::latch started(1), finish(1);
  auto worker = start([&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    started.count_down();
    finish.wait();
    EXPECT_TRUE(ctx.stop_token().stop_requested());
    return "late but done";
  });
  db_.add_task("slow", "s", /*timeout_seconds=*/10);
  started.wait();
  clock_.advance(seconds(11));
  ASSERT_TRUE(logs_.wait_for_text("task deadline passed"));
  finish.count_down();
  ASSERT_TRUE(db_.wait_for_reported(1));
  EXPECT_TRUE(db_.reported()[0].ok);
  EXPECT_EQ(db_.reported()[0].output, "late but done");
}

TEST_F(WorkerUnits, TasksTheDatabaseNoLongerWantsAreStoppedAndTheirResultsDropped) {
  std::atomic<int> dropped{0};
  WorkerConfig c = config_counting_drops(dropped);
  std::latch running(2);
  auto worker = start(
      [&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
        running.count_down();
        if (ctx.run_id() == "kept") return "kept";
        std::latch stopped(1);
        std::stop_callback on_stop(ctx.stop_token(), [&] { stopped.count_down(); });
        stopped.wait();
        return "whatever";
      },
      c);
  db_.add_task("cancelled", "s");
  db_.add_task("kept", "s");
  running.wait();
  db_.cancel_run("cancelled");
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return dropped.load() == 1; }));
  ASSERT_TRUE(db_.wait_for_reported(1));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  ASSERT_EQ(db_.reported().size(), 1u) << "only the wanted task's result";
  EXPECT_EQ(db_.reported()[0].run_id, "kept");
}

// A lost announcement (a pooled connection, a listener that missed it) delays the stop until
// the next heartbeat, which asks again.
TEST_F(WorkerUnits, AnUnwantedTaskWhoseAnnouncementWasLostStopsAtTheNextHeartbeat) {
  std::atomic<int> dropped{0};
  WorkerConfig c = config_counting_drops(dropped);
  std::latch running(1);
  std::atomic<bool> stopped{false};
  auto worker = start(until_stopped(running, stopped), c);
  db_.add_task("cancelled", "s");
  running.wait();
  ASSERT_TRUE(clock_.wait_for_sleepers(3));  // poller, maintenance and supervisor wait
  db_.cancel_run("cancelled", /*announced=*/false);
  EXPECT_FALSE(stopped.load()) << "nothing was announced, and no heartbeat came yet";
  clock_.advance(seconds(5));  // the heartbeat interval
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return dropped.load() == 1; }));
  EXPECT_TRUE(stopped.load());
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  EXPECT_TRUE(db_.reported().empty()) << "its result is dropped";
}

// Poll-only (a transaction pooler, no LISTEN): nothing is announced, and a cancelled run's
// tasks are found by asking at the poll interval, long before the next heartbeat.
TEST_F(WorkerUnits, PollOnlyAnUnwantedTaskStopsWithinOnePollInterval) {
  std::atomic<int> dropped{0};
  WorkerConfig c = config_counting_drops(dropped);
  c.poll_only = true;
  c.heartbeat_interval = seconds(60);
  std::latch running(1);
  std::atomic<bool> stopped{false};
  db_.add_task("cancelled", "s");  // found by the first poll
  auto worker = start(until_stopped(running, stopped), c);
  running.wait();
  ASSERT_TRUE(clock_.wait_for_sleepers(3));  // poller, maintenance and supervisor wait
  db_.cancel_run("cancelled", /*announced=*/false);
  clock_.advance(milliseconds(1000));  // one poll interval
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return dropped.load() == 1; }));
  EXPECT_TRUE(stopped.load());
  EXPECT_EQ(db_.heartbeats(), 0) << "found by the poll-only check, not by a heartbeat";
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  EXPECT_TRUE(db_.reported().empty()) << "its result is dropped";
}

// A poll-only worker left at the default poll interval still checks its running tasks every
// second (only its idle polls back off to 2 s: the next test).
TEST_F(WorkerUnits, PollOnlyAtTheDefaultPollIntervalAnUnwantedTaskStopsWithinOneSecond) {
  std::atomic<int> dropped{0};
  WorkerConfig c = config_counting_drops(dropped);
  c.poll_only = true;
  c.poll_interval = std::nullopt;
  c.heartbeat_interval = seconds(60);
  std::latch running(1);
  std::atomic<bool> stopped{false};
  db_.add_task("cancelled", "s");
  auto worker = start(until_stopped(running, stopped), c);
  running.wait();
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  db_.cancel_run("cancelled", /*announced=*/false);
  clock_.advance(milliseconds(1000));
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return dropped.load() == 1; }));
  EXPECT_TRUE(stopped.load());
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// At the default poll interval an idle poll-only worker backs off to 2 s, not 1 s (its looks
// are an idle fleet's cost to the server): in 10 s it looks at 40, 120, 280, 600, 1240, 2520,
// 4520, 6520 and 8520 ms, 9 times (13 with poll_interval = 1 s).
TEST_F(WorkerUnits, PollOnlyAtTheDefaultPollIntervalAnIdleWorkerLooksEveryTwoSeconds) {
  WorkerConfig c = config();
  c.poll_only = true;
  c.poll_interval = std::nullopt;
  auto worker =
      start([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return 1; }, c);
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.claims().size() == 1; }));
  ASSERT_NO_FATAL_FAILURE(advance_in_steps(milliseconds(10000)));
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  EXPECT_EQ(db_.claims().size(), 1u);
  EXPECT_EQ(db_.looks(), 9);
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// An idle poll-only worker backs off from 20 ms to the poll interval (1 s here): it polls at 0,
// 40, 120, 280, 600, 1240, 2240, 3240 and 4240 ms, 9 times in 5 s where polling at the fastest
// rate would make 250. Only the first poll claims; the others look at the queue (a statement
// far cheaper for the server than an empty claim), until a look finds work.
TEST_F(WorkerUnits, PollOnlyAnIdleWorkerBacksOffToThePollIntervalAndLooksInsteadOfClaiming) {
  WorkerConfig c = config();
  c.poll_only = true;
  std::atomic<int> looks_found{0}, looks_empty{0};
  c.metrics = [&](const WorkerMetric& m) {
    if (m.kind == WorkerMetric::Kind::kLooked) ++(m.value > 0 ? looks_found : looks_empty);
  };
  auto worker =
      start([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return 1; }, c);
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.claims().size() == 1; }));
  ASSERT_NO_FATAL_FAILURE(advance_in_steps(milliseconds(5000)));
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  EXPECT_EQ(db_.claims().size(), 1u);
  EXPECT_EQ(db_.looks(), 8);
  EXPECT_EQ(looks_empty.load(), 8) << "each look is counted (WorkerMetric::Kind::kLooked)";
  // Work that arrives is found by a look, then claimed (its announcement is not listened to).
  db_.add_task("found", "s");
  ASSERT_NO_FATAL_FAILURE(
      advance_in_steps(milliseconds(2000), [&] { return !db_.reported().empty(); }));
  ASSERT_TRUE(db_.wait_for_reported(1));
  EXPECT_EQ(looks_found.load(), 1);
  EXPECT_GE(db_.claims().size(), 2u) << "the look was followed by a claim";
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// Against a database that cannot look (a schema before 0020), an idle poll-only worker claims
// at each poll, as before, and says once why.
TEST_F(WorkerUnits, PollOnlyAgainstADatabaseThatCannotLookClaimsAtEachPoll) {
  db_.set_can_look(false);
  WorkerConfig c = config();
  c.poll_only = true;
  auto worker =
      start([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return 1; }, c);
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.claims().size() == 1; }));
  ASSERT_NO_FATAL_FAILURE(advance_in_steps(milliseconds(5000)));
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  EXPECT_EQ(db_.claims().size(), 9u);
  EXPECT_EQ(db_.looks(), 0);
  const std::vector<pgflow::testing::LogRecorder::Entry> entries = logs_.entries();
  EXPECT_EQ(std::count_if(entries.begin(), entries.end(),
                          [](const auto& e) {
                            return e.message ==
                                   "polling by claims: the database cannot look at an idle queue";
                          }),
            1);
  db_.add_task("found", "s");
  ASSERT_NO_FATAL_FAILURE(
      advance_in_steps(milliseconds(2000), [&] { return !db_.reported().empty(); }));
  ASSERT_TRUE(db_.wait_for_reported(1));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

TEST_F(WorkerUnits, AFatalClaimStopsTheWorkerWithTheReasonAndTheResumeCommand) {
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  db_.add_fatal_message("42", "no task for (run, step, index)");
  EXPECT_THAT(worker->wait(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("fatal claim on queue \"units\""), HasSubstr("42 (no task"),
                             HasSubstr("select pgflow.resume_worker_function('units-worker');"))));
  EXPECT_TRUE(db_.reported().empty());
}

TEST_F(WorkerUnits, ADeprecatedWorkerStopsAtItsNextHeartbeat) {
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  db_.set_deprecated(true);
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  clock_.advance(seconds(5));
  EXPECT_THAT(worker->wait(), IsOk());
  EXPECT_EQ(db_.heartbeats(), 1);
  EXPECT_TRUE(logs_.contains("worker deprecated by an operator"));
}

// A paused worker function's claims claim nothing and say nothing, so the heartbeat tells the
// log: once when the pause begins (with its reason and the statement that lifts it), again
// only when its reason changes, and once when it ends. The worker keeps running.
TEST_F(WorkerUnits, APauseOfItsFunctionIsLoggedWhenItBeginsAndWhenItEnds) {
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  auto pauses = [&] {
    int n = 0;
    for (const auto& e : logs_.entries())
      n += e.message.starts_with("this worker's function is paused");
    return n;
  };
  db_.set_pause_reason("fatal claim on queue \"q\": unsupported message(s) 7");
  for (int beat = 1; beat <= 2; ++beat) {
    ASSERT_TRUE(clock_.wait_for_sleepers(3));
    clock_.advance(seconds(5));
    ASSERT_TRUE(db_.wait_for_heartbeats(beat));
  }
  ASSERT_TRUE(logs_.wait_for_text("unsupported message(s) 7"));
  EXPECT_TRUE(logs_.wait_for_text("select pgflow.resume_worker_function('units-worker')"));
  EXPECT_EQ(pauses(), 1) << "a pause that goes on is not logged again";

  db_.set_pause_reason(std::nullopt);
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  clock_.advance(seconds(5));
  ASSERT_TRUE(logs_.wait_for_text("this worker's function was resumed"));
  EXPECT_EQ(pauses(), 1);
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// A role that may not read pgflow.worker_functions loses only the pause's log lines: the worker
// says so once and goes on beating.
TEST_F(WorkerUnits, APauseThatCannotBeReadIsSaidOnceAndTheHeartbeatsGoOn) {
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  db_.set_pause_reason(std::nullopt, /*readable=*/false);
  for (int beat = 1; beat <= 3; ++beat) {
    ASSERT_TRUE(clock_.wait_for_sleepers(3));
    clock_.advance(seconds(5));
    ASSERT_TRUE(db_.wait_for_heartbeats(beat));
  }
  ASSERT_TRUE(logs_.wait_for_text("cannot read whether this worker's function is paused"));
  int said = 0;
  for (const auto& e : logs_.entries()) said += e.message.starts_with("cannot read whether");
  EXPECT_EQ(said, 1);
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// A worker whose row was deleted (pruned while it could not beat) registers again at its next
// heartbeat: its claims would be refused without it.
TEST_F(WorkerUnits, AWorkerWhoseRegistrationVanishedRegistersAgain) {
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  ASSERT_EQ(db_.registrations(), 1);
  db_.unregister();
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  clock_.advance(seconds(5));
  ASSERT_TRUE(db_.wait_for_heartbeats(1));
  EXPECT_TRUE(logs_.wait_for_text("registered again"));
  EXPECT_EQ(db_.registrations(), 2);
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// A worker offers stall recovery every interval, and the database runs the pass only when no
// pass (any worker's) completed within half of it: a fleet's offers share the passes.
TEST_F(WorkerUnits, StallRecoveryIsOfferedUnlessAPassRanWithinHalfTheInterval) {
  WorkerConfig c = config();
  c.stall_recovery_interval = seconds(10);
  c.heartbeat_interval = seconds(3600);
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; }, c);
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  clock_.advance(seconds(10));  // the first offer falls within the first interval
  ASSERT_TRUE(db_.wait_for_stall_recovery_passes(1));
  EXPECT_EQ(db_.stall_recovery_unless_within(), seconds(5));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

TEST_F(WorkerUnits, StallRecoverySkippedForSeveralIntervalsIsReportedWithItsHolder) {
  WorkerConfig c = config();
  c.stall_recovery_interval = seconds(10);
  c.heartbeat_interval = seconds(3600);
  db_.set_stall_recovery(std::nullopt,
                         "pid 4711 (role app, application psql, idle in transaction, ...)");
  auto worker = start(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; }, c);
  // Passes every 10 s (the first within 10 s); the warning needs kStallRecoveryWarnAfter
  // intervals of skips in a row.
  for (int pass = 1; pass <= kStallRecoveryWarnAfter + 1; ++pass) {
    ASSERT_TRUE(clock_.wait_for_sleepers(3));
    clock_.advance(seconds(10));
    ASSERT_TRUE(db_.wait_for_stall_recovery_passes(pass));
    if (pass <= kStallRecoveryWarnAfter) {
      EXPECT_FALSE(logs_.contains("stall recovery has been skipped")) << pass;
    }
  }
  ASSERT_TRUE(logs_.wait_for_text("held_by=pid 4711 (role app"));
}

// A burst of due wait timers fires at one heartbeat: maintenance calls the database again while
// a call ended some (a batch of kTimerBatchRuns runs), not once per heartbeat; also when a run
// another transaction holds takes a place in every batch, so none is full.
TEST_F(WorkerUnits, ABurstOfDueWaitTimersFiresAtOneHeartbeat) {
  FlowDefinition flow = flow_with(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return nullptr; });
  flow.steps.push_back(StepDefinition{
      .slug = "nap",
      .dependencies = {"s"},
      .wait = WaitDefinition{.kind = WaitDefinition::Kind::kSleep, .sleep_for = seconds(1)}});
  db_.set_due_timers(2 * kTimerBatchRuns + 50);
  Worker worker(flow, config(), std::vector<StepRoute>{}, pgflow::testing::fake_stores(db_),
                clock_);
  ASSERT_THAT(worker.start(), IsOk());
  ASSERT_TRUE(clock_.wait_for_sleepers(3));
  clock_.advance(milliseconds(5000));  // the first heartbeat
  ASSERT_TRUE(db_.wait_for_heartbeats(1));
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.timer_calls() == 4; }))
      << "100, 100, the last 50, and one that found none: " << db_.timer_calls();
  EXPECT_EQ(db_.due_timers(), 0);

  db_.set_due_timers(2 * kTimerBatchRuns, /*held_runs=*/1);
  clock_.advance(milliseconds(5000));  // the next heartbeat
  ASSERT_TRUE(db_.wait_for_heartbeats(2));
  ASSERT_TRUE(pgflow::testing::wait_for([&] { return db_.timer_calls() == 4 + 4; }))
      << "99, 99, the last 2, and one that found none: " << db_.timer_calls();
  EXPECT_EQ(db_.due_timers(), 0) << "all at one heartbeat";
  worker.request_stop(absl::OkStatus());
  EXPECT_THAT(worker.wait(), IsOk());
}

// The stop sequence: stopping fires every handler's token; the worker waits for its handlers
// beyond the grace period (a handler must return), and the grace period bounds only how long
// results are retried while the database is down.
TEST_F(WorkerUnits, StoppingAwaitsHandlersAndTheGracePeriodBoundsReporting) {
  std::latch running(1), finish(1);
  auto worker = start([&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    running.count_down();
    finish.wait();  // ignores its stop token for as long as the test says
    return ctx.stop_token().stop_requested() ? "stopped" : "not stopped";
  });
  db_.add_task("r", "s");
  running.wait();
  db_.set_down(true);
  worker->request_stop(absl::OkStatus());
  ASSERT_TRUE(logs_.wait_for_text("stopping: waiting for in-flight handlers"));
  ASSERT_TRUE(clock_.wait_for_sleepers(1));
  clock_.advance(seconds(31));
  ASSERT_TRUE(logs_.wait_for_text("stop grace period over; still waiting for handlers to return"));
  EXPECT_TRUE(worker->running()) << "handlers are awaited, however long";
  finish.count_down();
  // The result cannot be reported (the database is down) and the grace period is over: at
  // least one more second of retries, then it is left to stall recovery.
  ASSERT_TRUE(pgflow::testing::wait_for([&] {
    clock_.advance(milliseconds(100));
    return !worker->running();
  }));
  EXPECT_THAT(worker->wait(), IsOk());
  EXPECT_TRUE(db_.reported().empty());
  EXPECT_TRUE(logs_.contains("result not reported before shutdown"));
  EXPECT_TRUE(db_.marked_stopped());
}

TEST_F(WorkerUnits, ResultsOfHandlersThatFinishWithinTheGracePeriodAreReported) {
  auto worker = start([](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    std::latch stopped(1);
    std::stop_callback on_stop(ctx.stop_token(), [&] { stopped.count_down(); });
    stopped.wait();
    return "wrapped up";
  });
  db_.add_task("r", "s");
  ASSERT_TRUE(logs_.wait_for_text("task started"));
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
  ASSERT_EQ(db_.reported().size(), 1u);
  EXPECT_EQ(db_.reported()[0].output, "wrapped up");
}

// A handler's stop callback is user code (it runs on the thread that fires the token): one
// that takes long neither blocks the worker's state nor delays other tasks...
TEST_F(WorkerUnits, ASlowStopCallbackDoesNotDelayOtherTasks) {
  std::latch in_callback(1), release(1);
  Worker* self = nullptr;
  auto worker = start([&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    if (ctx.run_id() != "slow") return "fast";
    std::stop_callback on_stop(ctx.stop_token(), [&] {
      (void)self->running();  // calls back into the worker
      in_callback.count_down();
      release.wait();  // and takes its time
    });
    while (!ctx.stop_token().stop_requested()) std::this_thread::yield();
    return "slow";
  });
  self = worker.get();
  db_.add_task("slow", "s");
  ASSERT_TRUE(logs_.wait_for_text("task started"));
  db_.cancel_run("slow");  // fires the slow task's callback on the maintenance thread
  in_callback.wait();
  db_.add_task("fast", "s");
  ASSERT_TRUE(db_.wait_for_reported(1)) << "other tasks run while the callback blocks";
  EXPECT_EQ(db_.reported()[0].run_id, "fast");
  release.count_down();
  worker->request_stop(absl::OkStatus());
  EXPECT_THAT(worker->wait(), IsOk());
}

// ... and one that stops the worker from inside (as an application may on a cancellation)
// does not deadlock it.
TEST_F(WorkerUnits, AStopCallbackThatStopsTheWorkerDoesNotDeadlock) {
  Worker* self = nullptr;
  auto worker = start([&](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
    std::stop_callback on_stop(
        ctx.stop_token(), [&] { self->request_stop(absl::CancelledError("the app gave up")); });
    while (!ctx.stop_token().stop_requested()) std::this_thread::yield();
    return "done";
  });
  self = worker.get();
  db_.add_task("r", "s");
  ASSERT_TRUE(logs_.wait_for_text("task started"));
  db_.cancel_run("r");
  EXPECT_THAT(worker->wait(), StatusIs(absl::StatusCode::kCancelled, HasSubstr("the app gave up")));
  EXPECT_TRUE(db_.reported().empty()) << "the cancelled task's result is dropped";
}

}  // namespace
}  // namespace pgflow::internal
