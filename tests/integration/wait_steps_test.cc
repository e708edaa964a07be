// Wait steps against the real embedded PostgreSQL (docs/waiting.md): typed flows whose steps
// wait for a signal or sleep with no worker holding them, signals from Client and Transaction,
// a worker restarted while a step waits, timers fired by the worker's maintenance, refusals,
// and a step-queued flow, which has no worker for its wait step.
#include <atomic>
#include <chrono>
#include <optional>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"
#include "testing/client_test_base.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::IsOkAndHolds;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_for;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;
using namespace std::chrono_literals;

struct Approval {
  bool approved = false;
  std::string by;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Approval, approved, by)

// draft -> approve (a wait for a signal) -> publish.
auto approval_flow() {
  return Flow<"waitApproval", std::string>()
      .step<"draft">([](const std::string& title) { return "draft of " + title; })
      .signal<"approve", Approval>(pgflow::after<"draft">)
      .step<"publish">(pgflow::after<"draft", "approve">,
                       [](const std::string& draft, const Approval& a) {
                         return draft + (a.approved ? " approved by " + a.by : " refused");
                       });
}

class WaitStepsTest : public pgflow::testing::ClientTestBase {
 protected:
  WorkerConfig config() {
    WorkerConfig c = test_worker_config(db_->url());
    c.heartbeat_interval = 200ms;  // the timers fire at every heartbeat
    return c;
  }
  // Whether step `step` of the run has tasks waiting.
  bool waiting(const std::string& run_id, const std::string& step) {
    absl::StatusOr<RunState> run = client_->get_run(run_id);
    if (!run.ok()) return false;
    const StepState* s = run->step(step);
    return s != nullptr && s->waiting();
  }
};

TEST_F(WaitStepsTest, AnApprovalWaitsWithNoWorkerTaskAndGoesOnWithTheTypedSignal) {
  const auto flow = approval_flow();
  std::atomic<int> handlers{0};
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, std::string("memo")));
  ASSERT_TRUE(wait_for([&] { return waiting(run_id, "approve"); }));

  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->get_run(run_id));
  const StepState* approve = run.step("approve");
  EXPECT_EQ(approve->status, StepStatus::kStarted);
  EXPECT_EQ(approve->waiting_tasks, 1);
  EXPECT_FALSE(approve->wakes_at.has_value()) << "no timeout: it waits for ever";
  EXPECT_EQ(sql("select count(*) from pgmq.q_waitapproval"), "0")
      << "the wait holds no message: no worker can claim it";
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where status = 'started'"), "0")
      << "and no worker runs anything for it";

  EXPECT_THAT(client_->send_signal(run_id, "approve", "approval-1", Approval{true, "ann"}),
              IsOkAndHolds(SignalOutcome::kDelivered));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done, client_->wait_for_run(run_id, 60s));
  ASSERT_EQ(done.status, RunStatus::kCompleted);
  PGFLOW_ASSERT_OK_AND_ASSIGN(auto output, done.output_as<FlowOutput<decltype(flow)>>());
  EXPECT_EQ(output.get<"publish">(), "draft of memo approved by ann");
  PGFLOW_ASSERT_OK_AND_ASSIGN(Approval stored, done.step("approve")->output_as<Approval>());
  EXPECT_EQ(stored.by, "ann") << "the payload is the wait step's typed output";

  EXPECT_THAT(client_->send_signal(run_id, "approve", "approval-1", Approval{false, "bob"}),
              IsOkAndHolds(SignalOutcome::kDuplicate))
      << "a resend is acknowledged, even after the run completed";
  EXPECT_THAT(client_->send_signal(run_id, "approve", "approval-2", Approval{false, "bob"}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("is completed")));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(WaitStepsTest, ASignalSentInATransactionTakesEffectOnlyWhenItCommits) {
  const auto flow = approval_flow();
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, std::string("memo")));
  ASSERT_TRUE(wait_for([&] { return waiting(run_id, "approve"); }));

  const absl::Status rolled_back = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<SignalOutcome> sent =
        tx.send_signal(run_id, "approve", "in-tx", Approval{true, "ann"});
    if (!sent.ok()) return sent.status();
    EXPECT_EQ(*sent, SignalOutcome::kDelivered);
    return absl::AbortedError("the caller's own work failed");
  });
  EXPECT_THAT(rolled_back, StatusIs(absl::StatusCode::kAborted, HasSubstr("own work failed")));
  EXPECT_TRUE(waiting(run_id, "approve")) << "the rolled-back signal changed nothing";

  EXPECT_THAT(client_->in_transaction([&](Transaction& tx) -> absl::Status {
    return tx.send_signal(run_id, "approve", "in-tx", Approval{true, "ann"}).status();
  }),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done, client_->wait_for_run(run_id, 60s));
  EXPECT_EQ(done.status, RunStatus::kCompleted);
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(WaitStepsTest, AStepWaitsThroughAWorkerRestart) {
  const auto flow = approval_flow();
  std::string run_id;
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
    PGFLOW_ASSERT_OK_AND_ASSIGN(run_id, client_->start_run(flow, std::string("memo")));
    ASSERT_TRUE(wait_for([&] { return waiting(run_id, "approve"); }));
    worker.stop();
    ASSERT_THAT(worker.wait(), IsOk());
  }
  // No worker runs: the signal still completes the step, and the dependent is queued.
  EXPECT_THAT(client_->send_signal(run_id, "approve", "late", Approval{true, "cy"}),
              IsOkAndHolds(SignalOutcome::kDelivered));
  EXPECT_EQ(sql("select status from pgflow.step_tasks where run_id = $1::uuid and step_slug = "
                "'publish'",
                {run_id}),
            "queued");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker again, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done, client_->wait_for_run(run_id, 60s));
  PGFLOW_ASSERT_OK_AND_ASSIGN(auto output, done.output_as<FlowOutput<decltype(flow)>>());
  EXPECT_EQ(output.get<"publish">(), "draft of memo approved by cy");
  again.stop();
  EXPECT_THAT(again.wait(), IsOk());
}

TEST_F(WaitStepsTest, TheWorkersMaintenanceFiresSleepsAndTimeouts) {
  const auto flow =
      Flow<"waitTimers", std::string>()
          .step<"start">([](const std::string& s) { return s; })
          .sleep<"nap">(pgflow::after<"start">, pgflow::sleep_for(1s))
          .signal<"answer", std::string>(pgflow::after<"start">, pgflow::signal_timeout(1s),
                                         pgflow::when_exhausted_skip)
          .step<"report">(pgflow::after<"nap", "answer">,
                          [](const Slept& slept, const std::optional<std::string>& answer) {
                            return answer.value_or("no answer") + ", slept until " + slept.until;
                          });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, std::string("go")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done, client_->wait_for_run(run_id, 60s));
  ASSERT_EQ(done.status, RunStatus::kCompleted);
  EXPECT_EQ(done.step("answer")->status, StepStatus::kSkipped)
      << "the wait timed out; when_exhausted skip skipped it";
  PGFLOW_ASSERT_OK_AND_ASSIGN(auto output, done.output_as<FlowOutput<decltype(flow)>>());
  EXPECT_THAT(output.get<"report">(), HasSubstr("no answer, slept until 20"));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

TEST_F(WaitStepsTest, RefusedSignalsNameWhatIsWrong) {
  const auto flow = approval_flow();
  compile(flow);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, std::string("memo")));
  EXPECT_THAT(client_->send_signal("00000000-0000-0000-0000-000000000000", "approve", "s"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("does not exist")));
  EXPECT_THAT(client_->send_signal(run_id, "aprove", "s"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("has no step \"aprove\"")));
  EXPECT_THAT(
      client_->send_signal(run_id, "draft", "s"),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not wait for a signal")));
  EXPECT_THAT(client_->send_signal("not-a-uuid", "approve", "s"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("is not a UUID")));
  // Refused before anything is sent: a signal id of 1 to 255 characters, a task index >= 0 (an
  // unknown run is not even looked up, and a transaction goes on).
  const std::string nobody = "00000000-0000-0000-0000-000000000000";
  EXPECT_THAT(client_->send_signal(nobody, "approve", ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Signal id must be 1 to 255 characters (got 0 characters)")));
  EXPECT_THAT(client_->send_signal(nobody, "approve", std::string(256, 's')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(got 256 characters)")));
  EXPECT_THAT(client_->send_signal(nobody, "approve", "s", nullptr, -1),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("task index must not be negative (got -1)")));
  EXPECT_THAT(client_->in_transaction([&](Transaction& tx) -> absl::Status {
    EXPECT_THAT(tx.send_signal(run_id, "approve", ""),
                StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
    EXPECT_THAT(
        tx.send_signal(run_id, "draft", "s"),
        StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not wait for a signal")))
        << "the database answers the next call: the refused one did not abort the transaction";
    return absl::AbortedError("rolled back on purpose");
  }),
              StatusIs(absl::StatusCode::kAborted, ::testing::_));
  EXPECT_THAT(client_->send_signal(run_id, "approve", "early", Approval{true, "ann"}),
              IsOkAndHolds(SignalOutcome::kBuffered))
      << "draft has not run (no worker): the signal waits for the step";
  EXPECT_THAT(client_->send_signal(run_id, "approve", "second", Approval{false, "bob"}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("already has a buffered signal"), Not(HasSubstr("early")),
                             Not(HasSubstr("second")))));
}

TEST_F(WaitStepsTest, AStepQueuedFlowNeedsNoWorkerForItsWaitStep) {
  const auto flow = with_step_queues(approval_flow());
  EXPECT_THAT(EdgeWorker::start(flow, only_step<"approve">, config()).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("\"approve\" of flow \"waitApproval\" is a wait step")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker drafts,
                              EdgeWorker::start(flow, only_step<"draft">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker publisher,
                              EdgeWorker::start(flow, only_step<"publish">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, client_->start_run(flow, std::string("memo")));
  ASSERT_TRUE(wait_for([&] { return waiting(run_id, "approve"); }));
  EXPECT_THAT(client_->send_signal(run_id, "approve", "ok", Approval{true, "dee"}),
              IsOkAndHolds(SignalOutcome::kDelivered));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done, client_->wait_for_run(run_id, 60s));
  EXPECT_EQ(done.status, RunStatus::kCompleted);
  drafts.stop();
  publisher.stop();
  EXPECT_THAT(drafts.wait(), IsOk());
  EXPECT_THAT(publisher.wait(), IsOk());
}

}  // namespace
}  // namespace pgflow
