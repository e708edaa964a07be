// The worker's only way to the database: every statement a worker sends is behind this
// interface (PgStore, pg_store.cc, holds them all), so the rest of src/worker is plain C++ that
// tests drive with a fake (tests/testing/fake_store.h).
//
// One Store per connection, used by one thread at a time: the worker opens one per role
// (startup, poller, reporter, maintenance, run inputs). Calls that take a stop token retry
// transient failures (a lost connection, a restarting server, a deadlock) with backoff,
// reconnecting as needed, until they succeed, fail for good, or `stop` is requested
// (kCancelled). Startup calls are tried once: the startup protocol retries them as a whole.
#ifndef PGFLOW_WORKER_STORE_H_
#define PGFLOW_WORKER_STORE_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/log.h"
#include "worker/clock.h"

namespace pgflow::internal {

// What the database says at the start of startup.
struct Handshake {
  int protocol = 0;       // the worker protocol it speaks (pgflow.worker_protocol())
  std::string isolation;  // the level the worker's statements run at ("read committed", ...)
};

// What a worker deploys at startup (ensure_flow_compiled).
struct Deployment {
  std::string flow_slug = {};
  std::string shape = {};       // the flow shape JSON (shape_of)
  std::string queue_mode = {};  // "flow" | "step"
  std::string route_map = {};   // JSON [{stepSlug, queueName}], as this library derived it
  std::string flow_alias = {};
  // JSON flow-control options (flow_control_of), or empty when the flow has none: it is then
  // deployed as before schema 0018, so a database without concurrency limits still takes it.
  std::string flow_control = {};
  int protocol = 0;  // the worker protocol this library speaks
};

// What the database made of it.
struct DeployOutcome {
  std::string status = {};  // compiled | verified | recompiled | mismatch
  std::vector<std::string> differences = {};
  std::string mismatch_kind = {};  // "shape" | "routing" | "flowControl" (mismatch, recompilation)
  std::string activation = {};     // activated | active | inactive
  std::string flow_alias = {};
  std::optional<std::string> active_flow_slug = {};
};

// The statement an operator runs to resume worker function `function_name`, for log lines.
inline std::string resume_function_statement(std::string_view function_name) {
  std::string literal;  // as an SQL string literal's contents
  for (char c : function_name) literal.append(c == '\'' ? 2 : 1, c);
  return "select pgflow.resume_worker_function('" + literal + "')";
}

// Who registers, on which queue.
struct Registration {
  std::string worker_id = {};
  std::string function_name = {};
  std::string flow_slug = {};
  std::string queue = {};
  int protocol = 0;
};

// One read-and-claim: up to `slots` messages of `queue`, for this worker (and its step).
struct ClaimRequest {
  std::string queue = {};
  std::string flow_slug = {};
  std::string step = {};  // empty: a worker of the whole flow
  std::string worker_id = {};
  int slots = 1;
  int visibility_timeout_s = 5;
};

// One message the claim looked at, and what it decided (claim_tasks' classification).
struct ClaimedMessage {
  std::string outcome = {};     // claimed | deferred | archived | gone | fatal
  std::string message_id = {};  // decimal text
  std::string reason = {};      // why, for every outcome but claimed
  // For claimed messages:
  std::string run_id = {};
  std::string step_slug = {};
  int task_index = 0;
  int attempt = 1;
  std::string claim_id = {};  // the claim that took it: a failure report names it (a fence)
  nlohmann::json input = {};
  std::string input_problem = {};  // why `input` could not be read (follows "the input "), if so
  std::optional<nlohmann::json> flow_input = {};  // root steps get the run input with the claim
  int timeout_seconds = 60;
};

// A task this worker runs, as the database knows it.
struct TaskRef {
  std::uint64_t id = 0;  // the worker's own number for it
  std::string run_id = {};
  std::string step_slug = {};
  int task_index = 0;
};

// The outcome of one handler call, to report.
struct TaskResult {
  std::string run_id = {};
  std::string step_slug = {};
  int task_index = 0;
  std::string message_id = {};  // decimal text, for logs
  bool ok = false;
  nlohmann::json output = {};      // when ok
  std::string error_message = {};  // when not ok
  bool permanent = false;          // when not ok: fail the task now, whatever attempts remain
  // The claim that took the attempt: the database ignores a failure of an attempt another
  // claim has taken over since (schema 0027; older schemas ignore it).
  std::string claim_id = {};
};

// The status the database gave a reported task: completed, failed, queued (a retry), or the
// unchanged status of a task that had ended already.
struct ReportedTask {
  std::string step_slug = {};
  std::string status = {};
};

class Store {
 public:
  virtual ~Store() = default;

  // ---- startup (tried once) ----
  // The worker protocol the database speaks and the isolation level the worker gets.
  virtual absl::StatusOr<Handshake> handshake() = 0;
  // Compiles or verifies the flow and activates an alias without an active version.
  virtual absl::StatusOr<DeployOutcome> deploy(const Deployment& deployment) = 0;
  // Registers the worker. `again`: an earlier attempt may have registered it and lost the reply,
  // which counts as registered.
  virtual absl::Status register_worker(const Registration& registration, bool again) = 0;

  // ---- the poller ----
  virtual absl::StatusOr<std::vector<ClaimedMessage>> claim(const ClaimRequest& request,
                                                            const std::stop_token& stop) = 0;
  // When the poller ends: gives back the claims whose reply was lost and that no later claim
  // gave back (their tasks would wait for stall recovery), trying for at most 5 s; logs any it
  // could not.
  virtual void release_lost_claims(const std::string& worker_id) = 0;
  // Waits until new work is announced on the worker's queue (a burst counts once), `until`, or
  // `stop`.
  virtual void wait_for_work(Clock::Time until, const std::stop_token& stop) = 0;
  // Whether the worker's queue holds a message a claim would read now: a look, much cheaper for
  // the server than an empty claim. kUnimplemented when the database cannot answer (a schema
  // older than 0020).
  virtual absl::StatusOr<bool> has_visible_work(const std::string& worker_id,
                                                const std::stop_token& stop) = 0;

  // ---- the reporter ----
  virtual absl::StatusOr<std::vector<ReportedTask>> complete_tasks(
      const std::vector<TaskResult>& results, const std::stop_token& stop) = 0;
  virtual absl::StatusOr<std::vector<ReportedTask>> fail_tasks(
      const std::vector<TaskResult>& results, const std::stop_token& stop) = 0;

  // ---- maintenance ----
  // Records a heartbeat; true when an operator deprecated the worker; kNotFound when the worker
  // has no row (it was deleted).
  virtual absl::StatusOr<bool> heartbeat(const std::string& worker_id,
                                         const std::stop_token& stop) = 0;
  // Why the worker's function is paused (pgflow.worker_functions.pause_reason; a fatal claim's
  // names the queue and messages), nullopt when it is not. A paused function claims nothing.
  virtual absl::StatusOr<std::optional<std::string>> pause_reason(const std::string& worker_id,
                                                                  const std::stop_token& stop) = 0;
  // One stall recovery pass: the number of tasks requeued, or nullopt when another session's
  // pass holds the lock (skipped); 0 without a pass when one completed within `unless_within`.
  virtual absl::StatusOr<std::optional<int>> recover_stalled_tasks(
      std::chrono::milliseconds unless_within, const std::stop_token& stop) = 0;
  // Fires the timers of wait steps that are due (any flow's), in at most `max_runs` runs: how
  // many waiting tasks ended (at least one per run it settled). kUnimplemented when the
  // database has none (a schema older than 0021).
  virtual absl::StatusOr<int> wake_waiting_tasks(int max_runs, const std::stop_token& stop) = 0;
  // The sessions holding the stall recovery lock for at least `held_for`, as a sentence.
  virtual absl::StatusOr<std::string> stall_recovery_holders(std::chrono::milliseconds held_for,
                                                             const std::stop_token& stop) = 0;
  // Waits until `until` or `stop`; true as soon as the database announces stopped tasks on the
  // worker's queue, or the connection was re-established (announcements may have been missed):
  // then ask unwanted_tasks.
  virtual bool wait_for_stop_announcements(Clock::Time until, const std::stop_token& stop) = 0;
  // Which of `tasks` the database no longer wants from this worker (cancelled, skipped, ended,
  // claimed by another worker, gone): their ids. Tried once; kCancelled when `stop` is requested
  // before a shared connection is free.
  virtual absl::StatusOr<std::vector<std::uint64_t>> unwanted_tasks(
      const std::vector<TaskRef>& tasks, const std::string& worker_id,
      const std::stop_token& stop) = 0;
  virtual absl::Status mark_stopped(const std::string& worker_id, const std::stop_token& stop) = 0;

  // ---- run inputs ----
  virtual absl::StatusOr<nlohmann::json> run_input(const std::string& run_id,
                                                   const std::stop_token& stop) = 0;

  // Closes the connection (the next call opens a new one).
  virtual void disconnect() = 0;
};

// The connections of a worker, each with its job.
enum class StoreRole { kStartup, kPoller, kReporter, kMaintenance, kInputs };

// Opens the Store of one role, for a worker of `queue` (the poller LISTENs for new work on it,
// maintenance for stopped tasks), logging its retries to `log`.
using StoreFactory = std::function<std::unique_ptr<Store>(StoreRole role, const std::string& queue,
                                                          const Logger& log)>;

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_STORE_H_
