// The tasks a worker has claimed and not yet finished, under one mutex: the handler slots, one
// record per task (what it is, its deadline, its stop source and why it stopped), and the
// deadline index. A task's life here:
//
//   add (claimed: a slot taken, a stop token, a deadline)
//     -> [stop: the worker stops | the database no longer wants it | its deadline passes;
//         the first cause wins]
//     -> returned (its handler returned: nothing can stop it any more; it says whether the
//        deadline fired first and whether the database ended the task)
//     -> release (its result is reported or dropped: the slot is free)
//
// User code never runs under the mutex: stop tokens (whose std::stop_callbacks are the
// handlers' code) are fired after unlocking, so a callback may take long or call back into
// the worker. Thread-safe.
#ifndef PGFLOW_WORKER_IN_FLIGHT_H_
#define PGFLOW_WORKER_IN_FLIGHT_H_

#include <cstdint>
#include <map>
#include <set>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "worker/clock.h"
#include "worker/store.h"

namespace pgflow::internal {

// Why a task's stop token fired first, or that its handler returned before any stop.
enum class StopCause { kNone, kWorkerStop, kUnwanted, kDeadline, kReturned };

// How a handler call ended, as far as stopping goes.
struct HandlerEnding {
  bool timed_out = false;  // its deadline fired before it returned and before any other stop
  bool unwanted = false;   // the database ended the task meanwhile: its result is not reported
};

// A task's identity and its timeout, for logs.
struct StoppedTask {
  TaskRef task = {};
  int timeout_seconds = 0;
};

class InFlight {
 public:
  explicit InFlight(int slots);
  InFlight(const InFlight&) = delete;
  InFlight& operator=(const InFlight&) = delete;

  // Blocks until a slot is free; the number of tasks that may be claimed now, at most `max`,
  // or 0 once the worker stops or stops claiming. Several finishing handlers may free slots
  // before it wakes, so claims stay large.
  int wait_for_slots(int max) ABSL_LOCKS_EXCLUDED(mu_);

  // A claimed task takes a slot. Its stop token fires at `deadline` (unless it returns first),
  // when the database no longer wants it, or when the worker stops (at once if it has).
  struct Added {
    std::uint64_t id;
    std::stop_token stop;
  };
  Added add(TaskRef task, int timeout_seconds, Clock::Time deadline) ABSL_LOCKS_EXCLUDED(mu_);
  // Its handler returned: no stop fires for it any more.
  HandlerEnding returned(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);
  // Its result is reported (or dropped): the slot is free.
  void release(std::uint64_t id) ABSL_LOCKS_EXCLUDED(mu_);

  // The tasks whose handlers run, for asking the database which are still wanted.
  std::vector<TaskRef> running() const ABSL_LOCKS_EXCLUDED(mu_);
  // The database no longer wants these (ids of running()): they are stopped and their results
  // will not be reported. Returns the tasks that were still running.
  std::vector<TaskRef> stop_unwanted(const std::vector<std::uint64_t>& ids)
      ABSL_LOCKS_EXCLUDED(mu_);

  // The earliest deadline (Clock::Time::max() when none), and a token that fires when an
  // earlier one arrives or the state below changes: what the deadline timer sleeps on. The
  // state is read with the token, so a change after it fires the token.
  struct NextDeadline {
    Clock::Time at;
    std::stop_token earlier;
    bool stopping = false;        // stop_all
    bool claims_stopped = false;  // stop_claims or stop_all
    bool drained = false;         // no_more_tasks, and no task holds a slot
  };
  NextDeadline next_deadline() const ABSL_LOCKS_EXCLUDED(mu_);
  // Stops every task whose deadline is at or before `now`, each once; returns those.
  std::vector<StoppedTask> fire_deadlines(Clock::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  // The worker stops: every task's token fires (a task added later gets a fired one), claims
  // end (wait_for_slots returns 0).
  void stop_all() ABSL_LOCKS_EXCLUDED(mu_);
  // The worker drains (deprecated): claims end, and the tasks it holds run on, stopped only by
  // their own deadlines or the database, until stop_all (if it comes).
  void stop_claims() ABSL_LOCKS_EXCLUDED(mu_);
  // No task will be added any more (the poller has ended; a claim under way when the worker
  // stopped may still have added one): from now on drained() may fire.
  void no_more_tasks() ABSL_LOCKS_EXCLUDED(mu_);
  // Tasks holding a slot.
  int count() const ABSL_LOCKS_EXCLUDED(mu_);
  // Fires once no task can be added any more (no_more_tasks) and none holds a slot.
  std::stop_token drained() const { return drained_.get_token(); }

 private:
  struct Task {
    TaskRef ref;
    int timeout_seconds = 0;
    Clock::Time deadline;
    std::stop_source stop;
    StopCause cause = StopCause::kNone;
    bool unwanted =
        false;  // set even after another cause: a task the database ended is never reported
    bool returned = false;
  };
  // Records `why` as the task's stop cause unless one is set; true when it was recorded.
  static bool stop_for(Task& task, StopCause why);
  // Fires the given sources; called without mu_ (they run the handlers' stop callbacks).
  static void fire(std::vector<std::stop_source>& sources);
  void erase_deadline(const Task& task) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // No task holds a slot and none can be added: drained() fires, the timer wakes.
  void note_drained(std::vector<std::stop_source>& to_fire) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int slots_;
  mutable absl::Mutex mu_;
  absl::CondVar slot_freed_;  // signalled when a slot frees or the worker stops
  std::map<std::uint64_t, Task> tasks_ ABSL_GUARDED_BY(mu_);
  std::set<std::pair<Clock::Time, std::uint64_t>> deadlines_ ABSL_GUARDED_BY(mu_);
  std::stop_source earlier_deadline_ ABSL_GUARDED_BY(mu_);  // replaced each time it fires
  std::uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 0;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  bool claims_stopped_ ABSL_GUARDED_BY(mu_) = false;
  bool no_more_tasks_ ABSL_GUARDED_BY(mu_) = false;
  std::stop_source drained_ = {};  // requested without mu_, once
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_IN_FLIGHT_H_
