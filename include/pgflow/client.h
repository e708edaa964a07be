// File: pgflow/client.h
//
// pgflow::Client starts runs and reads their state.
//
// Example:
//
//   absl::StatusOr<pgflow::Client> client = pgflow::Client::connect({.connection_string = url});
//   absl::StatusOr<pgflow::RunState> run = client->start_flow(onboard, Signup{"a@b.c"});
//   // run->flow_slug: the concrete version that runs; run->flow_alias: the alias started
//   absl::StatusOr<pgflow::RunState> done = client->wait_for_run(run->run_id, std::chrono::seconds(30));
//   absl::StatusOr<pgflow::FlowOutput<decltype(onboard)>> out =
//       done->output_as<pgflow::FlowOutput<decltype(onboard)>>();
//
// To create a run atomically with your own data, do both in one transaction:
//
//   absl::Status s = client->in_transaction([&](pgflow::Transaction& tx) -> absl::Status {
//     auto order = tx.exec("insert into orders (item) values ($1) returning id", {"book"});
//     if (!order.ok()) return order.status();
//     return tx.start_flow("processOrder", {{"order_id", *(*order)[0][0]}}).status();
//   });
//
// (Other drivers: `select * from pgflow.start_flow($1, $2::jsonb)` in their own transaction.)
//
// A producer that only needs the run id uses the lean start, which does not read the run back:
//
//   absl::StatusOr<std::string> run_id = client->start_run(onboard, Signup{"a@b.c"});
//
// Aliases. start_flow starts an alias: the active version of a flow deployed with
// define_deployed_flow (docs/deploying.md), or a plain flow, which is its own alias.
// start_flow_by_slug pins one concrete version. activate_flow_version switches an alias to
// another version by compare-and-swap; flow_aliases lists aliases with their versions.
//
// @par Thread Safety
// A Client is a cheap, copyable handle; copies share one bounded connection pool and may be
// used from any thread.
//
// @par Error Handling
// Every fallible call returns absl::Status / absl::StatusOr. Database errors keep their
// SQLSTATE (pgflow::sql_state). An unknown alias or flow is kNotFound, naming it; a bad input
// (e.g. a non-array for a flow with a root map) is kFailedPrecondition with the database's
// message. start_flow is never retried automatically (it is not idempotent without a run id).
//
// @par Performance
// Connections are opened on demand up to ClientConfig::max_connections and reused.
// wait_for_run LISTENs on a pooled connection and reads state only when notified.
#ifndef PGFLOW_CLIENT_H_
#define PGFLOW_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "pgflow/detail/typed_starts.h"
#include "pgflow/run_state.h"

namespace pgflow {

struct ClientConfig {
  // libpq connection string or URL. Default: the DATABASE_URL environment variable.
  std::string connection_string = {};
  // Connections the client keeps at most (each wait_for_run holds one while it waits).
  // Default: 4. Range 1..100.
  int max_connections = 4;
  // How long a call waits for a free pooled connection. Default: 30 s.
  std::chrono::milliseconds acquire_timeout{30000};
  // How long Client::connect keeps retrying while the database is unreachable (connection
  // refused, server starting or shutting down, too many connections); other errors (no
  // schema, bad credentials, unknown database) fail at once. Zero: fail at once. Default: 60 s.
  std::chrono::milliseconds connect_timeout{60000};
};

// A run or step state change, as published on the `pgflow_events` channel.
struct RunEvent {
  std::string event;      // run:started, run:completed, run:failed, step:started, step:completed, ...
  std::string run_id;
  std::string flow_slug;
  std::string step_slug;  // empty for run events
  std::string status;
};

// An alias and its versions (pgflow.flow_aliases and pgflow.flows.flow_alias).
struct FlowAlias {
  std::string alias;
  std::optional<std::string> active_flow_slug;  // what start_flow(alias) starts; none: no version active
  std::vector<std::string> versions;            // the member flows, in the order they were (last) compiled
  std::optional<absl::Time> updated_at;         // when the active version last changed
};

// The rows of a statement run in a Transaction: text values, nullopt for NULL.
using Rows = std::vector<std::vector<std::optional<std::string>>>;

// A transaction of the caller's, opened by Client::in_transaction.
class Transaction : public detail::TypedStarts<Transaction> {
 public:
  // The typed starts (a typed flow and its input type), as Client's.
  using TypedStarts::start_flow;
  using TypedStarts::start_flow_by_alias;
  using TypedStarts::start_flow_by_slug;
  using TypedStarts::start_run;
  using TypedStarts::start_run_by_slug;

  virtual ~Transaction() = default;
  // Runs one parameterised statement in the transaction.
  virtual absl::StatusOr<Rows> exec(std::string_view sql,
                                    const std::vector<std::optional<std::string>>& params = {}) const = 0;
  // Start a run in the transaction; it exists only if the transaction commits. As
  // Client::start_flow, start_flow_by_alias and start_flow_by_slug.
  virtual absl::StatusOr<RunState> start_flow(std::string_view flow_alias, const nlohmann::json& input,
                                              std::optional<std::string> run_id = std::nullopt) const = 0;
  virtual absl::StatusOr<RunState> start_flow_by_alias(std::string_view flow_alias, const nlohmann::json& input,
                                                       std::optional<std::string> run_id = std::nullopt) const = 0;
  virtual absl::StatusOr<RunState> start_flow_by_slug(std::string_view flow_slug, const nlohmann::json& input,
                                                      std::optional<std::string> run_id = std::nullopt) const = 0;
  // The lean starts in the transaction, as Client::start_run and start_run_by_slug.
  virtual absl::StatusOr<std::string> start_run(std::string_view flow_alias, const nlohmann::json& input,
                                                std::optional<std::string> run_id = std::nullopt) const = 0;
  virtual absl::StatusOr<std::string> start_run_by_slug(std::string_view flow_slug, const nlohmann::json& input,
                                                        std::optional<std::string> run_id = std::nullopt) const = 0;
  // Run control in the transaction, as Client::cancel_run, retry_run and resume_run.
  virtual absl::StatusOr<bool> cancel_run(std::string_view run_id,
                                          std::optional<std::string> reason = std::nullopt) const = 0;
  virtual absl::StatusOr<std::string> retry_run(std::string_view run_id,
                                                std::optional<std::string> new_run_id = std::nullopt) const = 0;
  virtual absl::StatusOr<RunState> resume_run(std::string_view run_id) const = 0;
};

// Stops delivering events when destroyed.
class Subscription {
 public:
  Subscription(Subscription&&) noexcept;
  Subscription& operator=(Subscription&&) noexcept;
  ~Subscription();

 private:
  friend class Client;
  class Impl;
  explicit Subscription(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// pgflow::Client
class Client : public detail::TypedStarts<Client> {
 public:
  // Typed starts: the same calls with a typed flow (pgflow/typed_flow.h) and its input type,
  // start_flow(onboard, Signup{...}): the flow's alias (start_flow, start_flow_by_alias) or its
  // own version (start_flow_by_slug, start_run_by_slug), with the input checked at compile time.
  using TypedStarts::start_flow;
  using TypedStarts::start_flow_by_alias;
  using TypedStarts::start_flow_by_slug;
  using TypedStarts::start_run;
  using TypedStarts::start_run_by_slug;

  // Checks the configuration and that the database is reachable with a pgflow schema,
  // retrying for up to ClientConfig::connect_timeout while it is unreachable.
  static absl::StatusOr<Client> connect(ClientConfig config = {});

  // Starts a run of the active version of alias `flow_alias` (a plain flow's alias is its
  // slug; a missing alias is kNotFound, never a fallback to a flow of that slug); `run_id` (a
  // UUID) makes the call idempotent for you to retry. Returns the run's state right after it
  // started: flow_slug is the concrete version that runs.
  absl::StatusOr<RunState> start_flow(std::string_view flow_alias, const nlohmann::json& input,
                                      std::optional<std::string> run_id = std::nullopt) const;
  // start_flow, naming the alias explicitly.
  absl::StatusOr<RunState> start_flow_by_alias(std::string_view flow_alias, const nlohmann::json& input,
                                               std::optional<std::string> run_id = std::nullopt) const;
  // Starts a run of the concrete flow `flow_slug`, whether or not it is its alias's active
  // version (a pinned start: tests, replays, draining an old version).
  absl::StatusOr<RunState> start_flow_by_slug(std::string_view flow_slug, const nlohmann::json& input,
                                              std::optional<std::string> run_id = std::nullopt) const;
  // The lean starts: as start_flow and start_flow_by_slug (same names, errors and run_id
  // rule), but they return only the new run's id and do not read the run back
  // (pgflow.start_run / start_run_by_slug, schema 0007). For producers that start many runs
  // and look at few of them; get_run reads one later.
  absl::StatusOr<std::string> start_run(std::string_view flow_alias, const nlohmann::json& input,
                                        std::optional<std::string> run_id = std::nullopt) const;
  absl::StatusOr<std::string> start_run_by_slug(std::string_view flow_slug, const nlohmann::json& input,
                                                std::optional<std::string> run_id = std::nullopt) const;
  // Run control (docs/client.md, "Cancelling, retrying and resuming runs").
  // Cancels a started run: it fails with cancelled_at and `reason`, its unfinished tasks are
  // cancelled and workers running them see their stop tokens fire. Returns true when this call
  // cancelled the run, false when it had already finished (nothing changed); kNotFound for an
  // unknown run.
  absl::StatusOr<bool> cancel_run(std::string_view run_id, std::optional<std::string> reason = std::nullopt) const;
  // Starts a new run of a failed or cancelled run's flow version with the same input, linked
  // by restart_of_run_id, and returns its id. `new_run_id` (a UUID) makes a retry safe to
  // repeat (kAlreadyExists the second time). A started or completed run is
  // kFailedPrecondition.
  absl::StatusOr<std::string> retry_run(std::string_view run_id,
                                        std::optional<std::string> new_run_id = std::nullopt) const;
  // Continues a failed or cancelled run where it stopped: completed steps keep their outputs,
  // failed and cancelled tasks run again with fresh attempts. Returns the run's state right
  // after. A started or completed run, or one whose flow was redefined since it started, is
  // kFailedPrecondition.
  absl::StatusOr<RunState> resume_run(std::string_view run_id) const;

  // Makes `flow_slug` the active version of `flow_alias` if the alias still points to
  // `expected_current` (std::nullopt: if it has no active version). A compare-and-swap: on a
  // conflict nothing changes and the error (kFailedPrecondition) names the actual current
  // version; a flow that is not a member of the alias is kInvalidArgument, an unknown flow
  // kNotFound. Returns the alias as the activation left it. (An operator's action: it needs
  // the schema owner's rights.)
  absl::StatusOr<FlowAlias> activate_flow_version(std::string_view flow_alias, std::string_view flow_slug,
                                                  std::optional<std::string> expected_current) const;
  // Every alias with its active version and its members, by alias.
  absl::StatusOr<std::vector<FlowAlias>> flow_aliases() const;

  // The run and its steps; kNotFound for an unknown run.
  absl::StatusOr<RunState> get_run(std::string_view run_id) const;

  // Waits until the run completes or fails and returns that final state; kDeadlineExceeded
  // after `timeout`. Listens for the run's events before reading its state, so no change is
  // missed, and re-reads only when notified (no polling loop).
  absl::StatusOr<RunState> wait_for_run(std::string_view run_id,
                                        std::chrono::milliseconds timeout) const;

  // Runs `body` in one transaction on a pooled connection: commits if it returns OK, rolls
  // back otherwise (and returns its status).
  absl::Status in_transaction(const std::function<absl::Status(Transaction&)>& body) const;

  // Calls `on_event` for every run and step event (of run `run_id` only, when given), from a
  // background thread with its own connection, until the Subscription is destroyed.
  // Reconnects after connection loss; events published meanwhile are missed, so re-read state
  // with get_run when exactness matters.
  absl::StatusOr<Subscription> subscribe(std::function<void(const RunEvent&)> on_event,
                                         std::optional<std::string> run_id = std::nullopt) const;

 private:
  class Impl;
  explicit Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  std::shared_ptr<Impl> impl_;
};

}  // namespace pgflow

#endif  // PGFLOW_CLIENT_H_
