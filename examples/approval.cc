// Approval: a flow that waits for a person, holding no worker while it waits
// (docs/waiting.md). Run it with DATABASE_URL set (ctest runs it as db.examples.approval).
//
//   draft ──> approve (a wait step: its output is the signal's payload) ──> publish
//                 └──> coolOff (a durable sleep of 1 s, then publish may go)
//
//   1. install/upgrade the schema and start a worker for the flow
//   2. start a run: draft runs, then approve waits, with no task queued and no handler
//   3. send the approval, as a web handler would (Client::send_signal; a resend is a duplicate)
//   4. wait for the run: publish receives the typed Approval
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/time/clock.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"

namespace approval {

struct Document {
  std::string title;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Document, title)
struct Approval {
  bool approved = false;
  std::string by;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Approval, approved, by)

using namespace std::chrono_literals;

inline const auto flow =
    pgflow::Flow<"approveDocument", Document>()
        .step<"draft">([](const Document& d) { return "Draft of " + d.title; })
        // No handler: the database waits for a signal (for at most 7 days; then the step
        // completes with a refusal instead of failing the run).
        .signal<"approve", Approval>(pgflow::after<"draft">,
                                     pgflow::signal_timeout(7 * 24h, Approval{false, "timeout"}))
        // No handler either: a durable sleep, kept in the database.
        .sleep<"coolOff">(pgflow::after<"approve">, pgflow::sleep_for(1s))
        .step<"publish">(pgflow::after<"draft", "approve", "coolOff">,
                         [](const std::string& draft, const Approval& a, const pgflow::Slept&) {
                           return a.approved ? draft + " (published, approved by " + a.by + ")"
                                             : draft + " (not published)";
                         });

}  // namespace approval

namespace {

int fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "approval: %s: %s\n", what, std::string(s.message()).c_str());
  return 1;
}

}  // namespace

int main() {
  if (absl::Status s = pgflow::migrate(); !s.ok()) return fail("migrate", s);
  pgflow::WorkerConfig config{.max_concurrent = 2};
  config.log_level = pgflow::LogLevel::kWarn;
  // The worker also fires the flow's timers (the sleep) at every heartbeat.
  config.heartbeat_interval = std::chrono::milliseconds(500);
  absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(approval::flow, config);
  if (!worker.ok()) return fail("start worker", worker.status());
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();
  if (!client.ok()) return fail("connect", client.status());

  absl::StatusOr<std::string> run_id = client->start_run(approval::flow, {"Q4 report"});
  if (!run_id.ok()) return fail("start_run", run_id.status());

  // Until draft is done the approval step is not waiting yet; a signal sent now would be
  // buffered and taken the moment it starts waiting. Here we wait to show the waiting state.
  for (int i = 0; i < 200; ++i) {
    absl::StatusOr<pgflow::RunState> run = client->get_run(*run_id);
    if (!run.ok()) return fail("get_run", run.status());
    if (const pgflow::StepState* approve = run->step("approve"); approve && approve->waiting()) {
      std::printf("approve is waiting for a signal (deadline %s); no worker holds it\n",
                  absl::FormatTime(*approve->wakes_at).c_str());
      break;
    }
    absl::SleepFor(absl::Milliseconds(50));
  }

  const approval::Approval yes{true, "ann"};
  absl::StatusOr<pgflow::SignalOutcome> sent =
      client->send_signal(*run_id, "approve", "approval-42", yes);
  if (!sent.ok()) return fail("send_signal", sent.status());
  std::printf("signal approval-42: %s\n", std::string(pgflow::to_string(*sent)).c_str());
  absl::StatusOr<pgflow::SignalOutcome> again =
      client->send_signal(*run_id, "approve", "approval-42", yes);
  if (!again.ok()) return fail("send_signal again", again.status());
  std::printf("the same signal again: %s\n", std::string(pgflow::to_string(*again)).c_str());

  absl::StatusOr<pgflow::RunState> done = client->wait_for_run(*run_id, std::chrono::seconds(60));
  if (!done.ok()) return fail("wait_for_run", done.status());
  auto out = done->output_as<pgflow::FlowOutput<decltype(approval::flow)>>();
  if (!out.ok()) return fail("typed output", out.status());
  std::printf("run %s: %s\n", std::string(pgflow::to_string(done->status)).c_str(),
              out->get<"publish">().c_str());
  worker->stop();
  const bool ok = worker->wait().ok() && *sent == pgflow::SignalOutcome::kDelivered &&
                  *again == pgflow::SignalOutcome::kDuplicate &&
                  out->get<"publish">() == "Draft of Q4 report (published, approved by ann)";
  return ok ? 0 : 1;
}
