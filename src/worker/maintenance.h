// The worker's upkeep, on its own thread and connection: heartbeats (an operator's deprecation
// drains the worker; a pause of its worker function, which makes its claims claim nothing, is
// logged when it begins and when it ends), stall recovery (one pass at a time across the
// cluster; a lock held elsewhere for several intervals is reported), and the stop announcements
// of the database (tasks this worker runs that it no longer wants are stopped; asked again at
// every heartbeat, in case an announcement was lost), or, poll-only, the same question asked at
// an interval; for a flow with wait steps, the timers of waiting tasks at every heartbeat.
// When the worker stops, it marks the worker stopped.
#ifndef PGFLOW_WORKER_MAINTENANCE_H_
#define PGFLOW_WORKER_MAINTENANCE_H_

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>

#include "pgflow/log.h"
#include "worker/clock.h"
#include "worker/in_flight.h"
#include "worker/store.h"

namespace pgflow::internal {

struct MaintenanceConfig {
  // Who the worker is: heartbeats name it, and a registration found gone (its row deleted, e.g.
  // pruned while the worker could not beat) is made again.
  Registration registration = {};
  std::chrono::milliseconds heartbeat_interval{5000};
  std::chrono::milliseconds stall_recovery_interval{15000};  // zero: no stall recovery
  // Poll-only: how often to ask which running tasks are still wanted, instead of waiting for
  // the database's announcements (LISTEN). nullopt: announcements.
  std::optional<std::chrono::milliseconds> stop_check_interval = std::nullopt;
  // The flow has wait steps: fire the database's due wait timers (any flow's) at every
  // heartbeat, so a timer fires at most about one heartbeat interval late while a worker runs
  // (a burst of due timers: as many as half a heartbeat interval of calls settles).
  bool fire_wait_timers = false;
};

// Stall recovery skipped this many intervals in a row is worth a warning.
inline constexpr int kStallRecoveryWarnAfter = 4;

// The most runs one call of pgflow.wake_waiting_tasks settles (its own default).
inline constexpr int kTimerBatchRuns = 100;

class Maintenance {
 public:
  // `deprecated` is called when an operator deprecated the worker.
  Maintenance(MaintenanceConfig config, Store& store, InFlight& in_flight, const Clock& clock,
              const Logger& log, std::function<void()> deprecated);

  // Until `stop`; then marks the worker stopped (trying for at most 5 s).
  void run(const std::stop_token& stop);

 private:
  void heartbeat(const std::stop_token& stop);
  void note_pause(const std::stop_token& stop);
  void recover_stalled_tasks(const std::stop_token& stop);
  void stop_unwanted_tasks(const std::stop_token& stop);
  void wake_waiting_tasks(const std::stop_token& stop);
  void mark_stopped();

  MaintenanceConfig config_;
  Store& store_;
  InFlight& in_flight_;
  const Clock& clock_;
  const Logger& log_;
  std::function<void()> deprecated_;
  std::optional<Clock::Time> recovery_skipped_since_ = {};  // passes skipped in a row since then
  bool draining_ = false;                                   // deprecated_ was called
  std::optional<std::string> pause_reason_ = {};            // the pause the log last told of
  bool pause_unreadable_ = false;    // the pause could not be read (logged once)
  bool timers_unavailable_ = false;  // the database has no wait timers (logged once)
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_MAINTENANCE_H_
