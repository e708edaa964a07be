// File: pgflow/client.h
//
// pgflow::Client starts runs and reads their state: the calls of pgflow::RunControl
// (pgflow/run_control.h: starts, cancel, retry, resume), each in its own transaction, plus
// reads, waits, activation, events and transactions of your own.
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
// (Other drivers: `select pgflow.start_flow_with_states($1, $2::jsonb)` in their own transaction;
// docs/client.md, "Permissions".)
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
// SQLSTATE (pgflow::sql_state); run_control.h says how starts and run control fail.
//
// @par Performance
// Connections are opened on demand up to ClientConfig::max_connections and reused.
// wait_for_run LISTENs on a pooled connection (or one to listen_connection_string): it reads
// the run when notified, and at least once a second besides (so it also ends when
// pgflow.notify_events is off). docs/deploying-at-scale.md: a client behind a pooler.
#ifndef PGFLOW_CLIENT_H_
#define PGFLOW_CLIENT_H_

#include <chrono>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "nlohmann/json.hpp"
#include "pgflow/run_control.h"
#include "pgflow/run_state.h"

namespace pgflow {

struct ClientConfig {
  // libpq connection string or URL. Default: the DATABASE_URL environment variable. May be
  // a transaction pooler (PgBouncer's pool_mode = transaction): every call works through it,
  // except the LISTENs of wait_for_run and subscribe (see the next two settings).
  std::string connection_string = {};
  // Where wait_for_run and subscriptions LISTEN. Default: connection_string (wait_for_run on a
  // pooled connection). Behind a transaction pooler, a direct connection to the server: each
  // wait_for_run and each subscription then opens one of its own while it lasts.
  std::string listen_connection_string = {};
  // Never LISTEN (a transaction pooler and no direct connection): wait_for_run re-reads the
  // run 20 ms after the first read, twice as long after each further one, at least once a
  // second; subscribe is refused (kFailedPrecondition). Default: false.
  bool poll_only = false;
  // Connections the client keeps at most (each wait_for_run holds one while it waits, unless
  // poll_only or listen_connection_string).
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
  // run:started, run:completed, run:failed, step:started, step:waiting (docs/waiting.md),
  // step:completed, step:failed, step:skipped
  std::string event;
  std::string run_id;
  std::string flow_slug;
  std::string step_slug;  // empty for run events
  std::string status;
};

// An alias and its versions (pgflow.flow_aliases and pgflow.flows.flow_alias).
struct FlowAlias {
  std::string alias;
  std::optional<std::string>
      active_flow_slug;                  // what start_flow(alias) starts; none: no version active
  std::vector<std::string> versions;     // the member flows, in the order they were (last) compiled
  std::optional<absl::Time> updated_at;  // when the active version last changed
};

// The rows of a statement run in a Transaction: text values, nullopt for NULL.
using Rows = std::vector<std::vector<std::optional<std::string>>>;

// A transaction of the caller's, opened by Client::in_transaction: the RunControl calls run
// in it, and so does any statement of your own.
class Transaction : public RunControl {
 public:
  // Runs one parameterised statement in the transaction.
  virtual absl::StatusOr<Rows> exec(
      std::string_view sql, const std::vector<std::optional<std::string>>& params = {}) const = 0;
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
class Client final : public RunControl {
 public:
  // Checks the configuration and that the database is reachable with a pgflow schema,
  // retrying for up to ClientConfig::connect_timeout while it is unreachable.
  static absl::StatusOr<Client> connect(ClientConfig config = {});

  // Makes `flow_slug` the active version of `flow_alias` if the alias still points to
  // `expected_current` (std::nullopt: if it has no active version). A compare-and-swap: on a
  // conflict nothing changes and the error (kFailedPrecondition) names the actual current
  // version; a flow that is not a member of the alias is kInvalidArgument, an unknown flow
  // kNotFound. Returns the alias as the activation left it. (An operator's action: it needs
  // the schema owner's rights.)
  absl::StatusOr<FlowAlias> activate_flow_version(
      std::string_view flow_alias, std::string_view flow_slug,
      std::optional<std::string> expected_current) const;
  // Every alias with its active version and its members, by alias.
  absl::StatusOr<std::vector<FlowAlias>> flow_aliases() const;

  // The run and its steps; kNotFound for an unknown run.
  absl::StatusOr<RunState> get_run(std::string_view run_id) const;

  // Waits until the run completes or fails and returns that final state; kDeadlineExceeded
  // after `timeout` (milliseconds::max(): no limit). Listens for the run's events before
  // reading its state, so no change is missed; re-reads it when notified, and at least once a
  // second (events may be off).
  absl::StatusOr<RunState> wait_for_run(std::string_view run_id,
                                        std::chrono::milliseconds timeout) const;

  // Runs `body` in one transaction on a pooled connection: commits if it returns OK, rolls
  // back otherwise (and returns its status).
  absl::Status in_transaction(const std::function<absl::Status(Transaction&)>& body) const;

  // Calls `on_event` for every run and step event (of run `run_id` only, when given), from a
  // background thread with its own connection (to listen_connection_string when set), until
  // the Subscription is destroyed. kFailedPrecondition for a poll-only client.
  // Reconnects after connection loss; events published meanwhile are missed, so re-read state
  // with get_run when exactness matters. Notifications on the channel that are not pgflow's
  // events are skipped. `on_event` must not throw: like any exception leaving a thread, one
  // would end the process (std::terminate).
  absl::StatusOr<Subscription> subscribe(std::function<void(const RunEvent&)> on_event,
                                         std::optional<std::string> run_id = std::nullopt) const;

 private:
  class Impl;
  explicit Client(std::shared_ptr<Impl> impl) : impl_(std::move(impl)) {}
  absl::Status on_connection(bool atomic,
                             absl::FunctionRef<absl::Status(pg::Connection&)> op) const override;
  std::shared_ptr<Impl> impl_;
};

}  // namespace pgflow

#endif  // PGFLOW_CLIENT_H_
