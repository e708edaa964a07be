#include "worker/poller.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/backoff.h"
#include "pgflow/status.h"

namespace pgflow::internal {

Poller::Poller(PollerConfig config, const FlowDefinition& flow, Store& store, InFlight& in_flight,
               TaskRunner& runner, Reporter& reporter, Executor& executor, const Clock& clock,
               const Logger& log, MetricSink metric, std::function<void(absl::Status)> stop_worker)
    : config_(std::move(config)),
      flow_(flow),
      store_(store),
      in_flight_(in_flight),
      runner_(runner),
      reporter_(reporter),
      executor_(executor),
      clock_(clock),
      log_(log),
      metric_(std::move(metric)),
      stop_worker_(std::move(stop_worker)) {}

void Poller::run(const std::stop_token& stop) {
  claim_until_stopped(stop);
  // A claim whose reply was lost, and that no later claim gave back, would leave its tasks to
  // stall recovery while this worker drains or stops.
  store_.release_lost_claims(config_.claim.worker_id);
}

void Poller::claim_until_stopped(const std::stop_token& stop) {
  Backoff backoff;
  const std::chrono::milliseconds flowing = std::min(kFlowingPollDelay, config_.poll_interval);
  std::chrono::milliseconds poll_delay = flowing;
  while (!stop.stop_requested()) {
    const int slots = in_flight_.wait_for_slots(config_.batch_size);
    if (slots == 0 || stop.stop_requested()) break;
    absl::StatusOr<int> read = claim(slots, stop);
    if (stop.stop_requested()) break;
    if (!read.ok()) {
      // Not transient (e.g. the worker row was removed): log, back off, try again.
      log_.error("claiming failed", {{"error", std::string(read.status().message())},
                                     {"sqlstate", sql_state(read.status()).value_or("")}});
      clock_.sleep_for(backoff.next(), stop);
      continue;
    }
    backoff.reset();
    // The read returned every message it asked for (whatever their outcome): the queue may hold
    // more; read again at once.
    if (*read >= slots) continue;
    if (config_.poll_only) {
      // Soon again while work is flowing; backing off to the poll interval while idle, and
      // then only looking at the queue until a claim would find something.
      poll_delay = *read > 0 ? flowing : std::min(poll_delay * 2, config_.poll_interval);
      clock_.sleep_for(poll_delay, stop);
      if (*read > 0) continue;
      while (!stop.stop_requested() && !worth_claiming(stop)) {
        poll_delay = std::min(poll_delay * 2, config_.poll_interval);
        clock_.sleep_for(poll_delay, stop);
      }
      continue;
    }
    // The read drained the queue: sleep until new work is announced or the fallback poll
    // interval passes. (Reading again at once would find nothing, or the one task a producer
    // committed meanwhile, whose announcement wakes us anyway: under a stream of producers that
    // turned every claim into a claim of one or two tasks plus an empty one.)
    store_.wait_for_work(clock_.now() + config_.poll_interval, stop);
  }
}

bool Poller::worth_claiming(const std::stop_token& stop) {
  if (!can_look_) return true;
  absl::StatusOr<bool> visible = store_.has_visible_work(config_.claim.worker_id, stop);
  if (visible.ok()) {
    metric_(WorkerMetric::Kind::kLooked, {}, *visible ? 1 : 0);
    return *visible;
  }
  if (absl::IsUnimplemented(visible.status())) {
    can_look_ = false;
    log_.info("polling by claims: the database cannot look at an idle queue",
              {{"reason", std::string(visible.status().message())}});
  }
  // The claim says what is wrong, or retries what failed.
  return true;
}

absl::StatusOr<int> Poller::claim(int slots, const std::stop_token& stop) {
  ClaimRequest request = config_.claim;
  request.slots = slots;
  const Clock::Time started = clock_.now();
  absl::StatusOr<std::vector<ClaimedMessage>> messages = store_.claim(request, stop);
  if (!messages.ok()) return messages.status();
  // Wall time first: the token then never fires before the deadline a handler can read.
  const Clock::WallTime claimed_at_wall = clock_.wall_now();
  const Clock::Time claimed_at = clock_.now();
  metric_(WorkerMetric::Kind::kClaimLatency, {},
          std::chrono::duration<double, std::milli>(claimed_at - started).count());

  std::vector<std::string> fatal;
  int claimed = 0;
  for (ClaimedMessage& m : *messages) {
    if (m.outcome == "fatal") {
      fatal.push_back(absl::StrCat(m.message_id, " (", m.reason, ")"));
    } else if (m.outcome == "claimed") {
      hand_out(std::move(m), claimed_at_wall, claimed_at);
      ++claimed;
    } else if (m.outcome == "archived") {
      // Finished tasks' messages are routine; anything else that got archived was not ours.
      if (m.reason.find("foreign") != std::string::npos) {
        log_.warn(
            "archived a message that is not pgflow work (applications must not send to pgflow "
            "queues)",
            {{"msg_id", m.message_id}});
      } else {
        log_.debug("archived the message of a finished task", {{"msg_id", m.message_id}});
      }
    } else {
      log_.debug("message not claimed",
                 {{"msg_id", m.message_id}, {"outcome", m.outcome}, {"reason", m.reason}});
    }
  }
  if (claimed > 0) metric_(WorkerMetric::Kind::kClaimed, {}, claimed);
  if (!fatal.empty()) {
    std::string message = absl::StrCat(
        "pgflow: fatal claim on queue \"", config_.claim.queue, "\": unsupported message(s) ",
        absl::StrJoin(fatal, ", "),
        "; nothing was claimed or archived, the messages are visible again, and worker function \"",
        config_.function_name,
        "\" is paused. Fix the queue, then run: ", resume_function_statement(config_.function_name),
        ";");
    log_.error(message);
    stop_worker_(absl::FailedPreconditionError(message));
  }
  return static_cast<int>(messages->size());
}

void Poller::hand_out(ClaimedMessage m, Clock::WallTime claimed_at_wall, Clock::Time claimed_at) {
  // The claim hid the message for the timeout (+ 2 s): the task's time runs from here.
  const auto timeout = std::chrono::seconds(m.timeout_seconds);
  InFlight::Added added =
      in_flight_.add({.run_id = m.run_id, .step_slug = m.step_slug, .task_index = m.task_index},
                     m.timeout_seconds, claimed_at + timeout);
  ClaimedTask task{.step = flow_.find(m.step_slug),
                   .id = added.id,
                   .stop = added.stop,
                   .run_id = std::move(m.run_id),
                   .task_index = m.task_index,
                   .attempt = m.attempt,
                   .claim_id = std::move(m.claim_id),
                   .message_id = std::move(m.message_id),
                   .input = std::move(m.input),
                   .input_problem = std::move(m.input_problem),
                   .flow_input = std::move(m.flow_input),
                   .timeout_seconds = m.timeout_seconds,
                   .deadline = claimed_at_wall + timeout};
  executor_.submit([this, task = std::move(task)] {
    if (std::optional<TaskResult> result = runner_.run(task)) reporter_.submit(*std::move(result));
    in_flight_.release(task.id);  // after the result is queued: a drained worker has every result
  });
}

}  // namespace pgflow::internal
