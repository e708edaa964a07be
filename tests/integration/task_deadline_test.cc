// Task deadlines against the real embedded PostgreSQL: a handler's stop token also fires when its
// step timeout runs out, and a handler that then fails fails the attempt as a deadline exceeded;
// handlers that finish in time, worker stops and run cancellations are not deadlines.
#include <atomic>
#include <chrono>
#include <mutex>
#include <stop_token>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"
#include "testing/client_test_base.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::IsOkAndHolds;
using pgflow::testing::LogRecorder;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_for;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class TaskDeadlineTest : public pgflow::testing::ClientTestBase {
 protected:
  // A worker configuration that counts what the reporter and the handlers did.
  WorkerConfig config() {
    WorkerConfig c = test_worker_config(db_->url(), &logs_);
    c.metrics = [this](const WorkerMetric& m) {
      if (m.kind == WorkerMetric::Kind::kRetried) ++retried_;
      if (m.kind == WorkerMetric::Kind::kFailed) ++failed_;
      if (m.kind == WorkerMetric::Kind::kCompleted) ++completed_;
      if (m.kind == WorkerMetric::Kind::kDropped) ++dropped_;
    };
    return c;
  }
  // The DSL refuses timeouts under 3 s; once the worker compiled the flow, the step's timeout is
  // lowered to 1 s (and its retry delay to 0) in the database, where claims read it.
  void tune_step(const std::string& flow_slug, const std::string& step_slug) {
    ASSERT_EQ(sql("update pgflow.steps set opt_timeout = 1, opt_base_delay = 0 "
                  "where flow_slug = $1 and step_slug = $2 returning 't'",
                  {flow_slug, step_slug}),
              "t");
  }
  // status/attempts_count/error_message of a run's only task.
  std::string task(const std::string& run_id) {
    return sql(
        "select status || '/' || attempts_count || '/' || coalesce(error_message, '<null>') "
        "from pgflow.step_tasks where run_id = $1::uuid",
        {run_id});
  }

  LogRecorder logs_;
  std::atomic<int> retried_{0};
  std::atomic<int> failed_{0};
  std::atomic<int> completed_{0};
  std::atomic<int> dropped_{0};
};

// Waits until the handler's stop token fires (60 s cap: only a broken build gets there).
bool wait_for_stop(const Context& ctx) {
  return wait_for([&ctx] { return ctx.stop_token().stop_requested(); });
}

TEST_F(TaskDeadlineTest, AHandlerHonouringItsTokenFailsEachAttemptAsDeadlineExceeded) {
  std::atomic<int> attempts{0};
  std::atomic<int> stopped_at_deadline{0};
  auto flow = Flow<"tdHonours", int>({.max_attempts = 2})
                  .step<"slow">([&](int x, Context& ctx) -> absl::StatusOr<int> {
                    ++attempts;
                    if (!wait_for_stop(ctx)) return x;
                    // Fired by the deadline, not before it.
                    if (std::chrono::system_clock::now() >= ctx.deadline()) ++stopped_at_deadline;
                    return absl::CancelledError("gave up");
                  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  tune_step("tdHonours", "slow");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              client_->wait_for_run(run_id, std::chrono::seconds(60)));

  EXPECT_EQ(run.status, RunStatus::kFailed);
  EXPECT_FALSE(run.cancelled());
  const std::string error = "step 'slow' exceeded its timeout of 1 s (handler: gave up)";
  EXPECT_EQ(task(run_id), "failed/2/" + error)
      << "both attempts hit the deadline; max_attempts is 2";
  EXPECT_EQ(run.step("slow")->error_message, error);
  EXPECT_EQ(attempts.load(), 2);
  EXPECT_EQ(stopped_at_deadline.load(), 2);
  EXPECT_TRUE(worker.running()) << "a deadline stops the task, not the worker";
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(retried_.load(), 1);
  EXPECT_EQ(failed_.load(), 1);
  EXPECT_EQ(dropped_.load(), 0) << "a deadline is not a cancellation: the failure is reported";
  EXPECT_TRUE(logs_.wait_for_text("task deadline passed: stop requested"));
}

TEST_F(TaskDeadlineTest, AHandlerFinishingBeforeItsDeadlineKeepsItsOwnResultAndItsTokenNeverFires) {
  // Input 0: fails at once on attempt 1, succeeds on attempt 2. Input 1: the later marker run,
  // which waits for its own deadline and then returns its output.
  std::mutex mu;
  std::vector<std::stop_token> quick_tokens;
  std::atomic<bool> marker_stopped{false};
  auto flow = Flow<"tdQuick", int>({.max_attempts = 2})
                  .step<"quick">([&](int x, Context& ctx) -> absl::StatusOr<int> {
                    if (x == 1) {
                      marker_stopped = wait_for_stop(ctx);
                      return 10;  // an output after the deadline still completes
                    }
                    {
                      std::lock_guard<std::mutex> lock(mu);
                      quick_tokens.push_back(ctx.stop_token());
                    }
                    if (ctx.attempt() == 1) return absl::UnavailableError("its own failure");
                    return x + 1;
                  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  tune_step("tdQuick", "quick");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string quick, client_->start_run(flow, 0));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->wait_for_run(quick, std::chrono::seconds(60)));
  EXPECT_EQ(run.status, RunStatus::kCompleted);
  EXPECT_EQ(run.output, nlohmann::json({{"quick", 1}}));
  EXPECT_EQ(task(quick), "completed/2/its own failure") << "the first failure kept its own message";

  // The marker is claimed after the quick run completed, so its deadline comes after both quick
  // attempts' deadlines, and deadlines fire in order: once the marker's fired, theirs would have.
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string marker, client_->start_run(flow, 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState marked,
                              client_->wait_for_run(marker, std::chrono::seconds(60)));
  EXPECT_TRUE(marker_stopped.load());
  EXPECT_EQ(marked.status, RunStatus::kCompleted);
  EXPECT_EQ(task(marker), "completed/1/<null>");
  {
    std::lock_guard<std::mutex> lock(mu);
    ASSERT_EQ(quick_tokens.size(), 2u);
    for (const std::stop_token& token : quick_tokens) {
      EXPECT_FALSE(token.stop_requested()) << "a finished task's deadline does not fire";
    }
  }
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(TaskDeadlineTest, AnOutputReturnedAfterTheDeadlineStillCompletesTheTask) {
  auto flow = Flow<"tdLate", int>().step<"late">([](int x, Context& ctx) -> absl::StatusOr<int> {
    if (!wait_for_stop(ctx)) return absl::InternalError("the deadline never fired");
    return x * 2;  // the handler ignored the request and finished its work
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  tune_step("tdLate", "late");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, 21));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              client_->wait_for_run(run_id, std::chrono::seconds(60)));
  EXPECT_EQ(run.status, RunStatus::kCompleted);
  EXPECT_EQ(run.output, nlohmann::json({{"late", 42}}));
  EXPECT_EQ(task(run_id), "completed/1/<null>");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(TaskDeadlineTest, AWorkerStopIsNotReportedAsADeadline) {
  std::atomic<int> started{0};
  // The flow's own timeout (60 s): the stop comes long before the deadline.
  auto flow = Flow<"tdStop", int>().step<"hold">([&](int x, Context& ctx) -> absl::StatusOr<int> {
    ++started;
    if (!wait_for_stop(ctx)) return x;
    return absl::CancelledError("asked to stop");
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, 1));
  ASSERT_TRUE(wait_for([&] { return started.load() == 1; }));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(task(run_id), "queued/1/asked to stop")
      << "the handler's own error, to be retried as before";
  EXPECT_EQ(retried_.load(), 1);
  for (const LogRecorder::Entry& e : logs_.entries()) {
    EXPECT_THAT(e.text(),
                AllOf(Not(HasSubstr("deadline passed")), Not(HasSubstr("exceeded its timeout"))))
        << "nothing was stopped by a deadline";
  }
}

TEST_F(TaskDeadlineTest, ARunCancelledAfterTheDeadlineFiredDropsTheResult) {
  std::atomic<bool> at_deadline{false};
  std::atomic<bool> release{false};
  auto flow = Flow<"tdCancel", int>().step<"slow">([&](int x, Context& ctx) -> absl::StatusOr<int> {
    if (!wait_for_stop(ctx)) return x;
    at_deadline = true;
    if (!wait_for([&] { return release.load(); })) return x;
    return absl::CancelledError("gave up");
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  tune_step("tdCancel", "slow");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, 1));
  ASSERT_TRUE(wait_for([&] { return at_deadline.load(); }));
  ASSERT_TRUE(logs_.wait_for_text("task deadline passed: stop requested"));
  EXPECT_THAT(client_->cancel_run(run_id, "not needed"), IsOkAndHolds(true));
  // The worker hears the cancellation while the handler still runs.
  ASSERT_TRUE(logs_.wait_for_text("task no longer wanted: stop requested"));
  release = true;
  ASSERT_TRUE(wait_for([&] { return dropped_.load() == 1; }))
      << "the database ended the task: its result is dropped, deadline or not";
  EXPECT_EQ(task(run_id), "cancelled/1/<null>");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_EQ(retried_.load() + failed_.load(), 0);
}

}  // namespace
}  // namespace pgflow
