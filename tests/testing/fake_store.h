// A database for the worker's units, in memory: FakeDatabase holds what a test arranges (the
// messages a claim returns, what the database says about deployments, heartbeats, stall
// recovery and unwanted tasks) and records what the worker sends (results, heartbeats, the
// stop mark). Each worker role gets a FakeStore on it. Waits happen on a FakeClock.
#ifndef PGFLOW_TESTING_FAKE_STORE_H_
#define PGFLOW_TESTING_FAKE_STORE_H_

#include <chrono>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "testing/fake_clock.h"
#include "worker/store.h"

namespace pgflow::testing {

class FakeDatabase {
 public:
  explicit FakeDatabase(const FakeClock& clock) : clock_(clock) {}

  // A claimed task for step `step` of run `run_id` that the next claim returns (and announces
  // it, waking an idle poller).
  void add_task(const std::string& run_id, const std::string& step, int timeout_seconds = 60,
                nlohmann::json input = nlohmann::json::object()) ABSL_LOCKS_EXCLUDED(mu_);
  // The next claim that finds tasks returns them only once the worker stops (a reply still
  // on its way when the stop comes); claims_held() counts such claims under way or done.
  void hold_next_claim_until_stop() ABSL_LOCKS_EXCLUDED(mu_);
  int claims_held() const ABSL_LOCKS_EXCLUDED(mu_);
  // A message the next claim finds unsupported (a fatal claim).
  void add_fatal_message(const std::string& message_id, const std::string& reason)
      ABSL_LOCKS_EXCLUDED(mu_);
  // The database ends run `run_id`'s tasks and announces it (the worker stops their handlers);
  // with `announced` false the announcement is lost (as on a pooled connection).
  void cancel_run(const std::string& run_id, bool announced = true) ABSL_LOCKS_EXCLUDED(mu_);
  // Down: results cannot be reported (calls wait until up again or their stop).
  void set_down(bool down) ABSL_LOCKS_EXCLUDED(mu_);
  void set_deprecated(bool deprecated) ABSL_LOCKS_EXCLUDED(mu_);
  // The status the database gives reported tasks for run `run_id` (by default: completed for a
  // completion, failed for a failure), e.g. the unchanged status of a late result's task.
  void answer_reports_of(const std::string& run_id, const std::string& status)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Pauses the worker's function with `reason` (nullopt: resumes it); heartbeats read it. With
  // `readable` false, reading it fails (a role that may not read pgflow.worker_functions).
  void set_pause_reason(std::optional<std::string> reason, bool readable = true)
      ABSL_LOCKS_EXCLUDED(mu_);
  // Deletes the worker's row: heartbeats find none until it registers again.
  void unregister() ABSL_LOCKS_EXCLUDED(mu_);
  int registrations() const ABSL_LOCKS_EXCLUDED(mu_);
  // What the next stall recovery passes return (nullopt: skipped, another session holds the lock).
  void set_stall_recovery(std::optional<int> requeued, std::string holders = "")
      ABSL_LOCKS_EXCLUDED(mu_);

  std::vector<internal::TaskResult> reported() const ABSL_LOCKS_EXCLUDED(mu_);
  std::vector<internal::ClaimRequest> claims() const ABSL_LOCKS_EXCLUDED(mu_);
  // Looks at the queue (has_visible_work); with `can` false the database cannot look (a schema
  // before 0020).
  int looks() const ABSL_LOCKS_EXCLUDED(mu_);
  void set_can_look(bool can) ABSL_LOCKS_EXCLUDED(mu_);
  int heartbeats() const ABSL_LOCKS_EXCLUDED(mu_);
  // Wait timers due now, one per run (wake_waiting_tasks ends them), and due runs another
  // transaction holds (each call skips them, in its batch); and the calls made.
  void set_due_timers(int due, int held_runs = 0) ABSL_LOCKS_EXCLUDED(mu_);
  int due_timers() const ABSL_LOCKS_EXCLUDED(mu_);
  int timer_calls() const ABSL_LOCKS_EXCLUDED(mu_);
  bool marked_stopped() const ABSL_LOCKS_EXCLUDED(mu_);
  // Waits (real time, bounded) until `n` results were reported; false on timeout.
  bool wait_for_reported(size_t n) const ABSL_LOCKS_EXCLUDED(mu_);
  bool wait_for_heartbeats(int n) const ABSL_LOCKS_EXCLUDED(mu_);
  bool wait_for_stall_recovery_passes(int n) const ABSL_LOCKS_EXCLUDED(mu_);
  // The `unless_within` of the last stall recovery offer (-1 ms before the first).
  std::chrono::milliseconds stall_recovery_unless_within() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  friend class FakeStore;
  const FakeClock& clock_;
  mutable absl::Mutex mu_;
  std::deque<internal::ClaimedMessage> queue_ ABSL_GUARDED_BY(mu_);
  int next_message_id_ ABSL_GUARDED_BY(mu_) = 1;
  bool work_announced_ ABSL_GUARDED_BY(mu_) = false;
  bool stop_announced_ ABSL_GUARDED_BY(mu_) = false;
  // Wake idle waits; replaced each time they fire (outside mu_).
  std::stop_source work_wake_ ABSL_GUARDED_BY(mu_), stop_wake_ ABSL_GUARDED_BY(mu_);
  std::set<std::string> cancelled_runs_ ABSL_GUARDED_BY(mu_);
  bool down_ ABSL_GUARDED_BY(mu_) = false;
  bool deprecated_ ABSL_GUARDED_BY(mu_) = false;
  std::map<std::string, std::string> report_answers_ ABSL_GUARDED_BY(mu_);  // by run id
  std::optional<std::string> pause_reason_ ABSL_GUARDED_BY(mu_);
  bool pause_readable_ ABSL_GUARDED_BY(mu_) = true;
  bool registered_ ABSL_GUARDED_BY(mu_) = false;
  int registrations_ ABSL_GUARDED_BY(mu_) = 0;
  std::optional<int> stall_recovery_ ABSL_GUARDED_BY(mu_) = 0;
  std::string stall_recovery_holders_ ABSL_GUARDED_BY(mu_);
  int stall_recovery_passes_ ABSL_GUARDED_BY(mu_) = 0;
  std::chrono::milliseconds stall_recovery_unless_within_ ABSL_GUARDED_BY(mu_){-1};
  std::vector<internal::TaskResult> reported_ ABSL_GUARDED_BY(mu_);
  std::vector<internal::ClaimRequest> claims_ ABSL_GUARDED_BY(mu_);
  bool hold_next_claim_ ABSL_GUARDED_BY(mu_) = false;
  int claims_held_ ABSL_GUARDED_BY(mu_) = 0;
  bool can_look_ ABSL_GUARDED_BY(mu_) = true;
  int looks_ ABSL_GUARDED_BY(mu_) = 0;
  int heartbeats_ ABSL_GUARDED_BY(mu_) = 0;
  int due_timers_ ABSL_GUARDED_BY(mu_) = 0;
  int held_timer_runs_ ABSL_GUARDED_BY(mu_) = 0;
  int timer_calls_ ABSL_GUARDED_BY(mu_) = 0;
  bool marked_stopped_ ABSL_GUARDED_BY(mu_) = false;
};

// The factory for internal::Worker: every role's store on `db`.
internal::StoreFactory fake_stores(FakeDatabase& db);

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTING_FAKE_STORE_H_
