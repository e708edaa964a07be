// File: pgflow/run_control.h
//
// pgflow::RunControl: starting runs and controlling them. Client (pgflow/client.h) and
// Transaction share these calls: on a Client each is its own transaction; on a Transaction it
// happens in the caller's, and exists only if that commits.
//
//   absl::StatusOr<pgflow::RunState> run = client->start_flow(onboard, Signup{"a@b.c"});
//   absl::StatusOr<bool> cancelled = client->cancel_run(run->run_id, "customer left");
//
// @par Error Handling
// An unknown alias, flow or run is kNotFound, naming it; an argument the database could never
// accept (a broken slug, a run id that is not a UUID, text PostgreSQL cannot hold) is
// kInvalidArgument before anything is sent; a refusal of the database (a bad input for the
// flow, a run in the wrong state) keeps its SQLSTATE (pgflow::sql_state) and its message,
// prefixed with what was asked. Starts are never retried automatically: pass a run id, or start
// with an idempotency key, to make a start safe to repeat.
#ifndef PGFLOW_RUN_CONTROL_H_
#define PGFLOW_RUN_CONTROL_H_

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow_definition.h"
#include "pgflow/run_state.h"
#include "pgflow/typed_flow.h"

namespace pgflow {

namespace pg {
class Connection;  // (internal: the library's connection, never used in user code)
}  // namespace pg

// What an idempotent start returns: the run of its key, and whether this call created it.
struct IdempotentStart {
  std::string run_id;
  bool created = false;  // false: an earlier start with the same alias and key created run_id
};

// What became of a signal sent to a wait step (RunControl::send_signal).
enum class SignalOutcome {
  kDelivered,  // its task was waiting: it completed with the payload, and the run moved on
  kBuffered,   // the step does not wait yet: kept until it does, then taken at once
  kDuplicate,  // the run already has a signal with this id for this task: nothing changed
};
// "delivered" / "buffered" / "duplicate", as pgflow.send_signal returns it.
std::string_view to_string(SignalOutcome outcome);

class RunControl {
 public:
  virtual ~RunControl() = default;

  // Starts a run of the active version of alias `flow_alias` (a plain flow's alias is its
  // slug; a missing alias is kNotFound, never a fallback to a flow of that slug); `run_id` (a
  // UUID) makes the call safe to retry: a repeat is kAlreadyExists and starts nothing (to get
  // the existing run back instead, use start_run_idempotent). Returns the run's state right
  // after it started: flow_slug is the concrete version that runs.
  absl::StatusOr<RunState> start_flow(std::string_view flow_alias, const nlohmann::json& input,
                                      std::optional<std::string> run_id = std::nullopt) const;
  // start_flow, naming the alias explicitly.
  absl::StatusOr<RunState> start_flow_by_alias(
      std::string_view flow_alias, const nlohmann::json& input,
      std::optional<std::string> run_id = std::nullopt) const;
  // Starts a run of the concrete flow `flow_slug`, whether or not it is its alias's active
  // version (a pinned start: tests, replays, draining an old version).
  absl::StatusOr<RunState> start_flow_by_slug(
      std::string_view flow_slug, const nlohmann::json& input,
      std::optional<std::string> run_id = std::nullopt) const;
  // The lean starts: as start_flow and start_flow_by_slug (same names, errors and run_id
  // rule), but they return only the new run's id and do not read the run back
  // (pgflow.start_run / start_run_by_slug, schema 0007). For producers that start many runs
  // and look at few of them; Client::get_run reads one later.
  absl::StatusOr<std::string> start_run(std::string_view flow_alias, const nlohmann::json& input,
                                        std::optional<std::string> run_id = std::nullopt) const;
  absl::StatusOr<std::string> start_run_by_slug(
      std::string_view flow_slug, const nlohmann::json& input,
      std::optional<std::string> run_id = std::nullopt) const;

  // The idempotent starts (docs/flow-control.md, "Idempotent starts"; schema 0017): the first
  // start of alias `flow_alias` with `idempotency_key` (1 to 255 characters: an order id, a
  // webhook delivery id; where start_run takes a run id) creates a run; every later one with
  // the same alias and key returns that run with created = false and starts nothing, whatever
  // its input, until the run is deleted (pruning frees its key). Concurrent starts with one key
  // create exactly one run. The _by_slug form starts a concrete version; its key still belongs
  // to the version's alias.
  absl::StatusOr<IdempotentStart> start_run_idempotent(std::string_view flow_alias,
                                                       const nlohmann::json& input,
                                                       std::string_view idempotency_key) const;
  absl::StatusOr<IdempotentStart> start_run_idempotent_by_slug(
      std::string_view flow_slug, const nlohmann::json& input,
      std::string_view idempotency_key) const;

  // Run control (docs/client.md, "Cancelling, retrying and resuming runs").
  // Cancels a started run: it fails with cancelled_at and `reason`, its unfinished tasks are
  // cancelled and workers running them see their stop tokens fire. Returns true when this call
  // cancelled the run, false when it had already finished (nothing changed); kNotFound for an
  // unknown run.
  absl::StatusOr<bool> cancel_run(std::string_view run_id,
                                  std::optional<std::string> reason = std::nullopt) const;
  // Starts a new run of a failed or cancelled run's flow version with the same input, linked
  // by restart_of_run_id, and returns its id. `new_run_id` (a UUID) makes a retry safe to
  // repeat (kAlreadyExists the second time). A started or completed run is
  // kFailedPrecondition.
  absl::StatusOr<std::string> retry_run(std::string_view run_id,
                                        std::optional<std::string> new_run_id = std::nullopt) const;
  // Continues a failed or cancelled run where it stopped: completed steps keep their outputs,
  // failed and cancelled tasks run again with fresh attempts. Returns the run's state right
  // after (the resumption and that read are one transaction). A started or completed run, or
  // one whose flow was redefined since it started, is kFailedPrecondition.
  absl::StatusOr<RunState> resume_run(std::string_view run_id) const;

  // Sets a run's priority (default 0; higher first; schema 0018): the order in which the
  // waiting tasks of flows with a concurrency limit are admitted (docs/flow-control.md,
  // "Priorities"). It applies to the run's waiting tasks at once and to every task it queues
  // later; a retry keeps it. As a start option, set it in the start's transaction, so the run's
  // first tasks are admitted in its order:
  //
  //   client->in_transaction([&](pgflow::Transaction& tx) -> absl::Status {
  //     absl::StatusOr<std::string> run_id = tx.start_run(orders, order);
  //     if (!run_id.ok()) return run_id.status();
  //     return tx.set_run_priority(*run_id, 10);
  //   });
  //
  // kNotFound for an unknown run. A flow without a limit admits its tasks as they are queued:
  // there a priority changes nothing.
  absl::Status set_run_priority(std::string_view run_id, int priority) const;

  // Sends signal `signal_id` (1 to 255 characters, the sender's: a resend with the same id is
  // a kDuplicate that changes nothing) with `payload` to task `task_index` of wait step
  // `step_slug` of run `run_id` (docs/waiting.md; schema 0021). The payload becomes the step's
  // output, so it must be what the step's type says (e.g. an Approval, which converts to JSON).
  // kInvalidArgument before anything is sent for a signal id outside 1 to 255 characters or a
  // negative task index; kNotFound for an unknown run or step; kInvalidArgument for a step
  // that does not wait for a signal, a task index outside the step, a payload a map's size
  // cannot come from;
  // kFailedPrecondition when the run or step has ended, or a second signal for one task is
  // sent before the step waits. On a Transaction it takes effect when the transaction commits.
  absl::StatusOr<SignalOutcome> send_signal(std::string_view run_id, std::string_view step_slug,
                                            std::string_view signal_id,
                                            const nlohmann::json& payload = nullptr,
                                            int task_index = 0) const;

  // The typed starts: the same calls with a typed flow (pgflow/typed_flow.h) and its input
  // type, checked at compile time: start_flow(onboard, Signup{...}). start_flow,
  // start_flow_by_alias, start_run and start_run_idempotent start the flow's alias (a
  // DeployedFlow's alias, a plain flow's slug) and also take the flow's signature
  // (pgflow/flow_signature.h: start_run(orders::Signature{}, order), for producers that do not
  // compile the handlers); the _by_slug forms start the typed flow's own version.
  template <StartableFlow F>
  absl::StatusOr<RunState> start_flow(const F& flow, const FlowInput<F>& input,
                                      std::optional<std::string> run_id = std::nullopt) const {
    return start_flow(detail::start_alias(flow), nlohmann::json(input), std::move(run_id));
  }
  template <StartableFlow F>
  absl::StatusOr<RunState> start_flow_by_alias(
      const F& flow, const FlowInput<F>& input,
      std::optional<std::string> run_id = std::nullopt) const {
    return start_flow_by_alias(detail::start_alias(flow), nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<RunState> start_flow_by_slug(
      const F& flow, const FlowInput<F>& input,
      std::optional<std::string> run_id = std::nullopt) const {
    return start_flow_by_slug(flow.definition().slug, nlohmann::json(input), std::move(run_id));
  }
  template <StartableFlow F>
  absl::StatusOr<std::string> start_run(const F& flow, const FlowInput<F>& input,
                                        std::optional<std::string> run_id = std::nullopt) const {
    return start_run(detail::start_alias(flow), nlohmann::json(input), std::move(run_id));
  }
  template <TypedFlow F>
  absl::StatusOr<std::string> start_run_by_slug(
      const F& flow, const FlowInput<F>& input,
      std::optional<std::string> run_id = std::nullopt) const {
    return start_run_by_slug(flow.definition().slug, nlohmann::json(input), std::move(run_id));
  }
  template <StartableFlow F>
  absl::StatusOr<IdempotentStart> start_run_idempotent(const F& flow, const FlowInput<F>& input,
                                                       std::string_view idempotency_key) const {
    return start_run_idempotent(detail::start_alias(flow), nlohmann::json(input), idempotency_key);
  }
  template <TypedFlow F>
  absl::StatusOr<IdempotentStart> start_run_idempotent_by_slug(
      const F& flow, const FlowInput<F>& input, std::string_view idempotency_key) const {
    return start_run_idempotent_by_slug(flow.definition().slug, nlohmann::json(input),
                                        idempotency_key);
  }

 protected:
  RunControl() = default;
  RunControl(const RunControl&) = default;
  RunControl& operator=(const RunControl&) = default;

 private:
  // Runs `op` on a connection: a pooled one of the Client (in one transaction when `atomic`),
  // or the Transaction's.
  virtual absl::Status on_connection(bool atomic,
                                     absl::FunctionRef<absl::Status(pg::Connection&)> op) const = 0;
};

}  // namespace pgflow

#endif  // PGFLOW_RUN_CONTROL_H_
