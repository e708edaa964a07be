// TaskRunner: one handler call and what is reported of it, with no thread and no database.
#include "worker/task_runner.h"

#include <stdexcept>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/fake_clock.h"
#include "testing/fake_store.h"
#include "testing/worker_harness.h"

namespace pgflow::internal {
namespace {

using ::testing::HasSubstr;

class TaskRunnerTest : public ::testing::Test {
 protected:
  std::optional<TaskResult> run(
      StepHandler handler, const std::function<void(InFlight&, std::uint64_t)>& meanwhile = {}) {
    flow_.steps = {StepDefinition{.slug = "s", .handler = std::move(handler)}};
    TaskRunner runner(
        flow_, in_flight_, inputs_, clock_, log_,
        [&](WorkerMetric::Kind kind, std::string_view, double) { metrics_.push_back(kind); });
    InFlight::Added added = in_flight_.add({.run_id = "r", .step_slug = "s"}, 10,
                                           clock_.now() + std::chrono::seconds(10));
    if (meanwhile) meanwhile(in_flight_, added.id);
    return runner.run({.step = &flow_.steps[0],
                       .id = added.id,
                       .stop = added.stop,
                       .run_id = "r",
                       .message_id = "7",
                       .input = {{"x", 1}},
                       .timeout_seconds = 10});
  }

  pgflow::testing::FakeClock clock_;
  pgflow::testing::FakeDatabase db_{clock_};
  pgflow::testing::LogRecorder logs_;
  Logger log_{logs_.sink(), LogLevel::kDebug, {}};
  FlowDefinition flow_{.slug = "f"};
  InFlight in_flight_{4};
  FlowInputCache inputs_{pgflow::testing::fake_stores(db_)(StoreRole::kInputs, "f", log_), 8};
  std::vector<WorkerMetric::Kind> metrics_;
};

TEST_F(TaskRunnerTest, AnOutputIsReportedAsCompleted) {
  std::optional<TaskResult> r =
      run([](const nlohmann::json& in, Context& ctx) -> absl::StatusOr<nlohmann::json> {
        EXPECT_EQ(ctx.message_id(), "7");
        return in["x"];
      });
  ASSERT_TRUE(r.has_value());
  EXPECT_TRUE(r->ok);
  EXPECT_EQ(r->output, 1);
  EXPECT_THAT(metrics_, ::testing::ElementsAre(WorkerMetric::Kind::kHandlerTime));
}

TEST_F(TaskRunnerTest, ExceptionsAndStatusesFailTheAttemptWithTheirMessage) {
  EXPECT_EQ(run([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> {
              throw std::runtime_error("thrown");
            })->error_message,
            "thrown");
  EXPECT_EQ(run([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> {
              throw 42;
            })->error_message,
            "the handler threw a non-standard exception");
  EXPECT_EQ(run([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> {
              return absl::NotFoundError("");
            })->error_message,
            "NOT_FOUND")
      << "a status without a message fails with its code's name";
}

TEST_F(TaskRunnerTest, AFailureAfterTheDeadlineIsATimeoutAnOutputStillCounts) {
  auto fire_deadline = [&](InFlight& f, std::uint64_t) {
    f.fire_deadlines(clock_.now() + std::chrono::seconds(11));
  };
  std::optional<TaskResult> failed = run(
      [](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> {
        return absl::CancelledError("stopped");
      },
      fire_deadline);
  EXPECT_EQ(failed->error_message, "step 's' exceeded its timeout of 10 s (handler: stopped)");
  std::optional<TaskResult> done =
      run([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return "done"; },
          fire_deadline);
  EXPECT_TRUE(done->ok);
}

TEST_F(TaskRunnerTest, TheResultOfATaskTheDatabaseEndedIsDropped) {
  std::optional<TaskResult> r =
      run([](const nlohmann::json&, Context&) -> absl::StatusOr<nlohmann::json> { return 1; },
          [](InFlight& f, std::uint64_t id) { f.stop_unwanted({id}); });
  EXPECT_FALSE(r.has_value());
  EXPECT_THAT(metrics_, ::testing::Contains(WorkerMetric::Kind::kDropped));
  EXPECT_TRUE(logs_.contains("task no longer wanted: result dropped"));
}

TEST_F(TaskRunnerTest, TheRunInputIsLoadedOnFirstUse) {
  std::optional<TaskResult> r =
      run([](const nlohmann::json&, Context& ctx) -> absl::StatusOr<nlohmann::json> {
        return ctx.flow_input();
      });
  EXPECT_EQ(r->output, (nlohmann::json{{"run", "r"}}));
}

}  // namespace
}  // namespace pgflow::internal
