#include "worker/maintenance.h"

#include <algorithm>
#include <thread>
#include <utility>
#include <vector>

#include "internal/random.h"

namespace pgflow::internal {

Maintenance::Maintenance(MaintenanceConfig config, Store& store, InFlight& in_flight,
                         const Clock& clock, const Logger& log, std::function<void()> deprecated)
    : config_(std::move(config)),
      store_(store),
      in_flight_(in_flight),
      clock_(clock),
      log_(log),
      deprecated_(std::move(deprecated)) {}

void Maintenance::run(const std::stop_token& stop) {
  Clock::Time next_beat = clock_.now() + config_.heartbeat_interval;
  const bool recovery = config_.stall_recovery_interval.count() > 0;
  // A random first offset spreads recovery attempts of workers started together.
  Clock::Time next_recovery =
      clock_.now() + random_duration(std::chrono::milliseconds(0), config_.stall_recovery_interval);
  Clock::Time next_stop_check = clock_.now();
  while (!stop.stop_requested()) {
    const Clock::Time wake = recovery ? std::min(next_beat, next_recovery) : next_beat;
    if (config_.stop_check_interval) {
      // Poll-only: ask at the interval (one query, only while tasks run).
      if (!clock_.sleep_until(std::min(wake, next_stop_check), stop)) break;
      if (clock_.now() >= next_stop_check) {
        next_stop_check = clock_.now() + *config_.stop_check_interval;
        stop_unwanted_tasks(stop);
      }
    } else {
      // Meanwhile: the database's announcements of stopped tasks (one check for a burst).
      while (store_.wait_for_stop_announcements(wake, stop)) stop_unwanted_tasks(stop);
    }
    if (stop.stop_requested()) break;
    if (clock_.now() >= next_beat) {
      next_beat += config_.heartbeat_interval;
      heartbeat(stop);
      // An announcement can be lost without a reconnect (a pooled connection, a listener
      // that never got it): asking at every heartbeat bounds a stop's delay by the interval.
      // One query, only while tasks run.
      if (!stop.stop_requested()) stop_unwanted_tasks(stop);
      if (config_.fire_wait_timers && !stop.stop_requested()) wake_waiting_tasks(stop);
    }
    if (recovery && clock_.now() >= next_recovery) {
      next_recovery += config_.stall_recovery_interval;
      recover_stalled_tasks(stop);
    }
  }
  mark_stopped();
}

void Maintenance::heartbeat(const std::stop_token& stop) {
  absl::StatusOr<bool> deprecated = store_.heartbeat(config_.registration.worker_id, stop);
  if (deprecated.status().code() == absl::StatusCode::kNotFound && !stop.stop_requested()) {
    // Without its row the worker's claims are refused ("not registered"): register again.
    absl::Status registered = store_.register_worker(config_.registration, /*again=*/true);
    if (registered.ok()) {
      log_.warn(
          "this worker's registration was gone (deleted from pgflow.workers); registered "
          "again");
    } else {
      log_.error("this worker's registration is gone and registering again failed",
                 {{"error", std::string(registered.message())}});
    }
    return;
  }
  if (!deprecated.ok()) return;
  note_pause(stop);
  if (*deprecated && !stop.stop_requested() && !draining_) {
    // Heartbeats go on while it drains: it stays live (pgflow workers; pruning keeps it).
    draining_ = true;
    deprecated_();
    log_.info("worker deprecated by an operator: no new claims, draining");
  }
}

// A paused function's claims claim nothing and say nothing (the queue looks empty), so the log
// is where an operator learns why a worker idles: once when a pause begins (or its reason
// changes), once when it ends. This is also how a worker hears of a pause its own fatal claim
// made when the claim's reply was lost.
void Maintenance::note_pause(const std::stop_token& stop) {
  const std::string& function = config_.registration.function_name;
  absl::StatusOr<std::optional<std::string>> pause_reason =
      store_.pause_reason(config_.registration.worker_id, stop);
  if (!pause_reason.ok()) {
    // (E.g. a role without SELECT on pgflow.worker_functions: sql/contrib/grants.sql gives it.)
    if (!pause_unreadable_ && pause_reason.status().code() != absl::StatusCode::kCancelled) {
      log_.warn("cannot read whether this worker's function is paused; its pauses go unlogged",
                {{"function", function}, {"error", std::string(pause_reason.status().message())}});
      pause_unreadable_ = true;
    }
    return;
  }
  if (*pause_reason == pause_reason_) return;
  if (*pause_reason) {
    log_.warn("this worker's function is paused: it claims nothing until an operator resumes it",
              {{"function", function},
               {"reason", **pause_reason},
               {"resume", resume_function_statement(function)}});
  } else {
    log_.info("this worker's function was resumed: claiming again", {{"function", function}});
  }
  pause_reason_ = *std::move(pause_reason);
}

// An offer runs a pass unless one (any worker's) completed within half the interval: a fleet
// runs about one pass per half interval, and a lone worker still one per interval.
// NULL from the database means another session holds pgflow's stall recovery lock. Skipped for
// longer than a few intervals means a session holds it for long (recovery is off for every
// worker): warn, naming it, once per kStallRecoveryWarnAfter intervals while it lasts.
void Maintenance::recover_stalled_tasks(const std::stop_token& stop) {
  absl::StatusOr<std::optional<int>> requeued =
      store_.recover_stalled_tasks(config_.stall_recovery_interval / 2, stop);
  if (!requeued.ok()) {
    if (requeued.status().code() != absl::StatusCode::kCancelled) {
      log_.error("stall recovery failed", {{"error", std::string(requeued.status().message())}});
    }
    return;
  }
  if (requeued->has_value()) {
    recovery_skipped_since_.reset();
    if (**requeued != 0)
      log_.info("stall recovery requeued tasks", {{"count", std::to_string(**requeued)}});
    return;
  }
  const Clock::Time now = clock_.now();
  if (!recovery_skipped_since_) {
    recovery_skipped_since_ = now;
    return;
  }
  const auto skipped =
      std::chrono::duration_cast<std::chrono::milliseconds>(now - *recovery_skipped_since_);
  if (skipped < kStallRecoveryWarnAfter * config_.stall_recovery_interval) return;
  absl::StatusOr<std::string> holders = store_.stall_recovery_holders(skipped, stop);
  log_.warn(
      "stall recovery has been skipped: another session holds pgflow's stall recovery lock, so no "
      "worker recovers stalled tasks",
      {{"skipped_s", std::to_string(skipped.count() / 1000)},
       {"held_by", holders.ok() ? *holders : std::string("unknown")}});
  recovery_skipped_since_ = now;
}

void Maintenance::stop_unwanted_tasks(const std::stop_token& stop) {
  const std::vector<TaskRef> running = in_flight_.running();
  if (running.empty()) return;
  absl::StatusOr<std::vector<std::uint64_t>> unwanted =
      store_.unwanted_tasks(running, config_.registration.worker_id, stop);
  if (!unwanted.ok()) {
    if (stop.stop_requested()) return;  // the worker stops: its tasks' tokens fire anyway
    // The next announcement or heartbeat checks again; worker stop and the deadline still apply.
    log_.warn("could not check which running tasks are still wanted",
              {{"error", std::string(unwanted.status().message())}});
    return;
  }
  for (const TaskRef& task : in_flight_.stop_unwanted(*unwanted)) {
    log_.debug("task no longer wanted: stop requested",
               {{"run_id", task.run_id},
                {"step", task.step_slug},
                {"task_index", std::to_string(task.task_index)}});
  }
}

// A call settles at most kTimerBatchRuns runs, so one that ended tasks may have left due timers
// (a full batch, or one whose places went partly to runs another transaction holds, which end
// nothing): call again at once while calls end some, for up to half a heartbeat interval (the
// heartbeat must not wait long); what is left fires at the next heartbeat.
void Maintenance::wake_waiting_tasks(const std::stop_token& stop) {
  if (timers_unavailable_) return;
  const Clock::Time give_way_at = clock_.now() + config_.heartbeat_interval / 2;
  absl::StatusOr<int> ended = 0;
  int fired = 0;
  do {
    ended = store_.wake_waiting_tasks(kTimerBatchRuns, stop);
    if (ended.ok()) fired += *ended;
  } while (ended.ok() && *ended > 0 && !stop.stop_requested() && clock_.now() < give_way_at);
  if (fired != 0) log_.debug("wait timers fired", {{"count", std::to_string(fired)}});
  if (ended.ok()) return;
  if (ended.status().code() == absl::StatusCode::kUnimplemented) {
    timers_unavailable_ = true;
    log_.warn("wait steps' timers cannot fire: " + std::string(ended.status().message()));
  } else if (!stop.stop_requested()) {
    // The next heartbeat tries again: a due timer only fires later.
    log_.warn("could not fire wait timers", {{"error", std::string(ended.status().message())}});
  }
}

void Maintenance::mark_stopped() {
  // Last act: tell the database this worker is gone, for at most 5 s.
  absl::Status marked = clock_.within(std::chrono::seconds(5), [this](const std::stop_token& t) {
    return store_.mark_stopped(config_.registration.worker_id, t);
  });
  if (!marked.ok())
    log_.warn("could not mark the worker stopped", {{"error", std::string(marked.message())}});
}

}  // namespace pgflow::internal
