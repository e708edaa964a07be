// File: pgflow/worker.h
//
// pgflow::EdgeWorker runs one flow's step handlers: it claims the flow's tasks from
// PostgreSQL, runs them on a pool of threads and reports each result back. Everything else
// (readiness, retries, map fan-out, run completion) happens in the database.
//
// Example (a deployment main(); see examples/worker_main.cc):
//
//   int main() {
//     absl::Status s = pgflow::EdgeWorker::run(my_flow, {.max_concurrent = 8});
//     if (!s.ok()) { std::fprintf(stderr, "%s\n", std::string(s.message()).c_str()); return 1; }
//   }
//
// Or embedded, with a handle:
//
//   absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(my_flow, config);
//   ...
//   worker->stop();                         // or let the destructor stop and drain it
//   absl::Status why = worker->wait();
//
// A StepQueuedFlow (pgflow/step_queued_flow.h) has one queue per step, and a worker serves one
// step of it: start(flow, pgflow::only_step<"slug">, config), checked at compile time, or
// config.step for deployments configured at run time. Start one worker per step, in one
// process or in several; tasks of a step without a worker wait in its queue.
//
//   auto ship = pgflow::EdgeWorker::start(orders, pgflow::only_step<"ship">, {.max_concurrent = 32});
//
// A DeployedFlow (pgflow/deployed_flow.h) is a version behind an alias; its workers start like
// the flow it wraps, and their startup deploys the version under its alias.
//
// Startup, in order: protocol handshake with the database (an older or newer schema is
// refused with a clear message), then one transaction under the alias lock and the flow's
// lock: alias membership, compile-or-verify the flow shape, queue mode and route (a mismatch
// outside local development lists the differences and stops startup; a local database
// recompiles), and an active version for an alias without one (docs/deploying.md); then
// register (a worker function paused by a fatal claim is refused), then poll.
//
// @par Connections
// A worker holds 4 connections: the poller (also LISTENs for new work), the reporter (results),
// the heartbeat (also stall recovery and stop announcements) and one for lazily loaded run
// inputs (opened on first use); startup uses a fifth, closed once the worker runs. With
// listen_connection_string the two LISTENs move to two direct connections of their own; with
// poll_only there are none; max_connections caps the rest. Every statement works through a
// transaction pooler (docs/deploying-at-scale.md).
//
// @par Threads
// One poller, one reporter, one heartbeat thread (also stall recovery and the database's stop
// announcements), one supervisor (task deadlines, then the stop sequence) and `max_concurrent`
// handler threads. Handlers run concurrently and must be thread-safe. A handler's
// std::stop_callback runs on the thread that fires its token (the heartbeat thread, the
// supervisor, the poller after a fatal claim, or the thread that called stop(), a handler's
// included), never under a lock of the worker.
//
// @par Stopping
// stop() (or SIGTERM/SIGINT in run()): no new claims, and every in-flight handler's stop token
// fires. The worker then waits for its handlers however long they take (a handler must return
// once its token fires), warning when stop_grace_period has passed; reports their results,
// retrying an unreachable database until the grace period ends (at least 1 s more); results
// still unreported then are logged and left to stall recovery; and marks itself stopped.
//
// @par Errors
// Database errors are classified by SQLSTATE; transient ones (lost connection, deadlock, lock
// timeout, server restart) are retried with capped exponential backoff and jitter, and the
// connection is re-established: the worker never spins and never dies on them. Results
// computed while the database is unreachable are kept in memory and reported once it is back.
// A fatal claim (unsupported messages in the queue, see docs/worker.md) stops the worker with
// one error line; wait() then returns kFailedPrecondition.
#ifndef PGFLOW_WORKER_H_
#define PGFLOW_WORKER_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "pgflow/detail/fixed_string.h"
#include "pgflow/flow_definition.h"
#include "pgflow/log.h"
#include "pgflow/typed_flow.h"

namespace pgflow {

namespace detail {
template <FixedString Step>
struct OnlyStepTag {};
}  // namespace detail

// Selects the step a worker of a StepQueuedFlow serves, checked at compile time:
// `pgflow::EdgeWorker::start(flow, pgflow::only_step<"ship">, config)`.
template <detail::FixedString Step>
inline constexpr detail::OnlyStepTag<Step> only_step{};

// One measurement, delivered to WorkerConfig::metrics as it happens.
struct WorkerMetric {
  enum class Kind {
    kClaimed,       // value: tasks claimed by one claim call
    kCompleted,     // value: 1 per task reported completed
    kFailed,        // value: 1 per task whose failure exhausted its attempts
    kRetried,       // value: 1 per failed attempt that the database will retry
    kClaimLatency,  // value: milliseconds of one read-and-claim round trip
    kHandlerTime,   // value: milliseconds one handler call took
    kDropped,       // value: 1 per handler result not reported because the database no longer
                    // wanted the task (its run was cancelled or failed, or its step skipped)
    kLooked,        // value: 1 (work to claim) or 0 per look at an idle queue (poll_only workers
                    // look instead of claiming while idle)
  };
  Kind kind;
  // Empty for kClaimed, kClaimLatency and kLooked. Valid during the callback only (copy it to
  // keep it).
  std::string_view step_slug;
  double value;
};

// How a worker runs. Plain aggregate: use designated initializers (every field has a default,
// so `{.max_concurrent = 8}` compiles cleanly even with -Wmissing-field-initializers).
// Durations over 100 years count as 100 years (milliseconds::max() means "forever").
struct WorkerConfig {
  // libpq connection string or URL. Default: the DATABASE_URL environment variable. Every
  // statement the worker sends works through a transaction pooler (PgBouncer in
  // pool_mode = transaction); LISTEN does not: see listen_connection_string and poll_only.
  std::string connection_string = {};
  // Where the worker LISTENs for announcements: new work on its queue, and tasks the database
  // stopped (a cancelled run). Default: connection_string. Behind a transaction pooler, where a
  // LISTEN hears nothing, set it to a direct connection to the server (the worker keeps two
  // there, idle but for notifications), or set poll_only. docs/deploying-at-scale.md.
  std::string listen_connection_string = {};
  // Never LISTEN (a transaction pooler and no direct connection): poll for new work, at once
  // after a read that filled every free slot, 20 ms after one that found some, doubling after
  // each read that found none, up to poll_interval (while idle it only looks at the queue, a
  // statement far cheaper for the server than an empty claim, and claims once there is work);
  // and ask which running tasks are still wanted every poll_interval (1 s by default), so a
  // cancelled run's stop tokens fire within that plus a round trip. Default: false.
  bool poll_only = false;
  // The most connections to connection_string the worker holds (startup's, closed before the
  // others open, aside). 4: one each for the poller, the reporter, the heartbeat and run
  // inputs. Fewer: roles share, one statement at a time: 3, run inputs use the heartbeat's;
  // 2, the heartbeat the poller's and run inputs the reporter's; 1, all one. Below 4 needs
  // poll_only or listen_connection_string (a connection that LISTENs waits on its own).
  // Default: 4. Range 1..4.
  int max_connections = 4;
  // Names the deployment (pgflow.worker_functions); a fatal claim pauses it. Default:
  // "<flow_slug>-worker", and "<flow_slug>-<step>-worker" for a step worker. At most 256
  // bytes.
  std::string function_name = {};
  // The step this worker serves, for a flow with one queue per step (StepQueuedFlow): for
  // deployments configured at run time (e.g. from the environment). Checked against the flow
  // before anything touches the database. only_step<"slug"> sets it at compile time. Must be
  // empty for a flow with one queue for all its steps. Default: empty.
  std::string step = {};
  // Handler threads, i.e. tasks in flight at once. Default: 10. Range 1..1000.
  int max_concurrent = 10;
  // Messages read per poll (never more than the free handler slots). Default: 10. 1..1000.
  int batch_size = 10;
  // How long a read message stays hidden before the claim extends it to the step's timeout
  // (+2 s). Whole seconds (PGMQ's unit). Default: 5 s. 1 s .. 2147483647 s (PGMQ's int).
  std::chrono::seconds visibility_timeout{5};
  // When idle, the poller wakes on new-work notifications; it also polls at this interval
  // to catch retries whose backoff ended and delayed steps. poll_only: the longest wait
  // between polls (how late an idle worker finds new work), and between checks of running
  // tasks. Default: 1 s; a poll_only worker polls every 2 s while idle (an idle fleet's polls
  // are a large part of its cost to the server: docs/deploying-at-scale.md) and still checks
  // running tasks every 1 s. At least 10 ms.
  std::optional<std::chrono::milliseconds> poll_interval = std::nullopt;
  // Heartbeat period (pgflow.workers.last_heartbeat_at); 30 s without one makes a worker
  // unresponsive (pgflow.is_live_worker). Default: 5 s. At least 100 ms.
  std::chrono::milliseconds heartbeat_interval{5000};
  // How often this worker offers to run stall recovery (pgflow.requeue_stalled_tasks); one
  // worker at a time across the cluster does it. Zero disables. Default: 15 s. Not negative.
  std::chrono::milliseconds stall_recovery_interval{15000};
  // On stop: how long results are retried while the database is unreachable, counted from the
  // stop (handlers are awaited however long they take; see Stopping above). Default: 30 s.
  // Not negative.
  std::chrono::milliseconds stop_grace_period{30000};
  // Results reported per round trip. 1 disables batching. Default: 64. At least 1.
  int report_batch_size = 64;
  // How long EdgeWorker::start keeps retrying while the database is unreachable (a restart,
  // a failover, a worker started before its database): transient errors (connection refused,
  // server starting or shutting down, too many connections, deadlocks) are retried with
  // backoff and logged once per attempt; anything else (no schema, a protocol or definition
  // mismatch, a paused worker function, bad credentials) fails at once. Zero: fail at once.
  // Default: 60 s.
  std::chrono::milliseconds startup_timeout{60000};
  // Where log records go, from worker threads (must be thread-safe and must not throw).
  // Default: stderr_log_sink().
  LogSink log_sink = {};
  // Default: kInfo. Per-task lines are at kDebug.
  LogLevel log_level = LogLevel::kInfo;
  // Optional; called from worker threads (must be thread-safe, quick and must not throw: an
  // exception leaving a worker thread ends the process).
  std::function<void(const WorkerMetric&)> metrics = {};
};

// pgflow::EdgeWorker
//
// A move-only handle of a running worker. Destroying it stops the worker and waits for it
// to drain.
class EdgeWorker {
 public:
  // Starts a worker for a typed flow (pgflow/flow.h, step_queued_flow.h) or a FlowDefinition.
  // A flow with one queue per step needs config.step, or the overload with only_step. A worker
  // that does not start logs why ("worker did not start") and returns it: callers need not
  // print it again.
  template <TypedFlow F>
  static absl::StatusOr<EdgeWorker> start(const F& flow, WorkerConfig config = {}) {
    return start(flow.definition(), std::move(config));
  }
  static absl::StatusOr<EdgeWorker> start(const FlowDefinition& flow, WorkerConfig config = {});

  // Starts a worker for step `Step` of a StepQueuedFlow. A flow with one queue for all its
  // steps, or a slug that is not one of its steps, is a compile error. (kInvalidArgument when
  // config.step names another step.)
  template <TypedFlow F, detail::FixedString Step>
  static absl::StatusOr<EdgeWorker> start(const F& flow, detail::OnlyStepTag<Step>,
                                          WorkerConfig config = {}) {
    check_only_step<F, Step>();
    if (absl::Status s = select_step(config, Step.view()); !s.ok()) return s;
    return start(flow.definition(), std::move(config));
  }

  // Starts a worker and blocks until SIGTERM or SIGINT (then stops it gracefully) or until it
  // stops by itself. Returns OK after a signal-initiated stop, else why it stopped (which it
  // has logged).
  template <TypedFlow F>
  static absl::Status run(const F& flow, WorkerConfig config = {}) {
    return run(flow.definition(), std::move(config));
  }
  static absl::Status run(const FlowDefinition& flow, WorkerConfig config = {});
  template <TypedFlow F, detail::FixedString Step>
  static absl::Status run(const F& flow, detail::OnlyStepTag<Step>, WorkerConfig config = {}) {
    check_only_step<F, Step>();
    if (absl::Status s = select_step(config, Step.view()); !s.ok()) return s;
    return run(flow.definition(), std::move(config));
  }

  EdgeWorker(EdgeWorker&&) noexcept;
  EdgeWorker& operator=(EdgeWorker&&) noexcept;
  ~EdgeWorker();

  // Asks the worker to stop: no new claims; in-flight handlers are signalled and drained.
  // Returns at once; wait() blocks until the worker has stopped.
  void stop();
  // Blocks until the worker stopped; returns why (OK after stop()).
  absl::Status wait();
  // True until the worker has stopped.
  bool running() const;
  // This worker's id (pgflow.workers.worker_id).
  const std::string& worker_id() const;

 private:
  class Impl;
  template <typename F, detail::FixedString Step>
  static constexpr void check_only_step() {
    if constexpr (requires { F::queue_mode; }) {  // (not a flow that failed to compile)
      static_assert(F::queue_mode == QueueMode::kStep,
                    "pgflow: only_step<\"...\"> selects one step of a StepQueuedFlow, but this "
                    "flow has one queue for all its steps; give each step its own queue with "
                    "pgflow::with_step_queues(flow), or start the worker without only_step");
      if constexpr (F::queue_mode == QueueMode::kStep) {
        static_assert(F::template has_step<Step>,
                      "pgflow: only_step<\"...\">: the flow has no step with this slug; name one "
                      "of its steps");
      }
    }
  }
  // Sets config.step to `step`; kInvalidArgument when it already names another step.
  static absl::Status select_step(WorkerConfig& config, std::string_view step);

  explicit EdgeWorker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pgflow

#endif  // PGFLOW_WORKER_H_
