#include "pgflow/client.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "client/rereads.h"
#include "client/run_state_json.h"
#include "client/statements.h"
#include "internal/durations.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "internal/text_checks.h"
#include "internal/timestamps.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pg/pool.h"
#include "pg/session.h"
#include "pg/startup_retry.h"
#include "pgflow/detail/slug.h"
#include "pgflow/status.h"

namespace pgflow {
namespace {

using pg::with_message;

// An unknown alias or flow (P0002 from start_flow) is kNotFound and says so itself; everything
// else keeps its mapping and names what was started.
absl::Status start_error(const absl::Status& s, std::string_view what) {
  if (sql_state(s) == "P0002") return with_message(s, absl::StrCat("pgflow: ", s.message()));
  return with_message(
      s, absl::StrCat("pgflow: starting ", internal::absl_view(what), " failed: ", s.message()));
}

absl::StatusOr<RunState> parse_run(std::string_view text, std::string_view run_id) {
  if (text.empty())
    return absl::NotFoundError(
        absl::StrCat("pgflow: run ", internal::absl_view(run_id), " does not exist"));
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return absl::InternalError("get_run_with_states returned unparsable JSON");
  return internal::run_state_from_json(j);
}

// ---- arguments, checked before they reach the database (docs/errors.md, "Hostile input") ----
// Hostile values appear in messages only through internal::printable (escaped, bounded).

// Text PostgreSQL cannot hold: kInvalidArgument with the SQLSTATE the server gives such bytes.
absl::Status text_error(std::string_view what, std::string_view problem) {
  return pg::database_error("22021", absl::StrCat("pgflow: invalid ", internal::absl_view(what),
                                                  ": it ", internal::absl_view(problem)));
}

// A flow slug or alias: text PostgreSQL can hold, and a valid slug. The database refuses every
// other name when flows are defined, so no flow or alias has one: kInvalidArgument naming the
// broken rule instead of a lookup that cannot succeed.
absl::Status check_name(std::string_view what, std::string_view name) {
  const std::string subject =
      absl::StrCat(internal::absl_view(what), " ", internal::printable(name));
  if (std::optional<std::string> problem = internal::text_problem(name))
    return text_error(subject, *problem);
  if (const char* rule = detail::slug_error(name)) {
    return absl::InvalidArgumentError(absl::StrCat("pgflow: invalid ", subject, ": ", rule));
  }
  return absl::OkStatus();
}

// A run id: what PostgreSQL's uuid type reads; otherwise kInvalidArgument with the SQLSTATE
// the database gives it (22P02).
absl::Status check_uuid(std::string_view what, std::string_view id) {
  if (internal::is_uuid(id)) return absl::OkStatus();
  return pg::database_error("22P02", absl::StrCat("pgflow: ", internal::absl_view(what), " ",
                                                  internal::printable(id), " is not a UUID"));
}

// Free text (a cancel reason): anything PostgreSQL text can hold. Not quoted in the message.
absl::Status check_text(std::string_view what, std::string_view text) {
  if (std::optional<std::string> problem = internal::text_problem(text))
    return text_error(what, *problem);
  return absl::OkStatus();
}

// The input (or `what` else: a signal's payload) as JSON text, or kInvalidArgument saying what
// jsonb (or JSON) cannot hold. Checked first without recursion: nlohmann's dump recurses once
// per level.
absl::StatusOr<std::string> input_text(const nlohmann::json& input,
                                       std::string_view what = "the input") {
  if (std::optional<internal::JsonProblem> problem = internal::json_problem(input)) {
    const std::string message = absl::StrCat(internal::absl_view(what), " ", problem->text);
    return problem->sqlstate.empty() ? absl::InvalidArgumentError(message)
                                     : pg::database_error(problem->sqlstate, message);
  }
  try {
    return input.dump();
  } catch (const nlohmann::json::exception& e) {
    return absl::InvalidArgumentError(
        absl::StrCat(internal::absl_view(what), " cannot be written as JSON: ", e.what()));
  }
}

// What a start names: an alias (resolved to its active version in the same call) or a
// concrete flow.
enum class StartBy { kAlias, kSlug };
// What a start returns: the new run's state as JSON, or only its id (the lean start).
enum class StartReturns { kState, kRunId };

// What every start checks before sending, in this order: the name, `argument` (the check of
// the start's own argument: a run id, an idempotency key), and the input as JSON text.
struct StartRequest {
  std::string what;  // for messages: `flow alias "x"` or `flow "x"`
  std::string input_json;
};

absl::StatusOr<StartRequest> start_request(StartBy by, std::string_view name,
                                           const absl::Status& argument,
                                           const nlohmann::json& input) {
  const bool by_alias = by == StartBy::kAlias;
  PGFLOW_RETURN_IF_ERROR(check_name(by_alias ? "flow alias" : "flow slug", name));
  PGFLOW_RETURN_IF_ERROR(argument);
  StartRequest request{
      absl::StrCat(by_alias ? "flow alias \"" : "flow \"", internal::absl_view(name), "\""), ""};
  absl::StatusOr<std::string> input_json = input_text(input);
  if (!input_json.ok()) return start_error(input_json.status(), request.what);
  request.input_json = *std::move(input_json);
  return request;
}

// Starts a run; returns the entry point's one text value.
absl::StatusOr<std::string> exec_start(pg::Connection& conn, StartBy by, StartReturns returns,
                                       std::string_view name, const nlohmann::json& input,
                                       const std::optional<std::string>& run_id) {
  PGFLOW_ASSIGN_OR_RETURN(
      StartRequest request,
      start_request(by, name, run_id ? check_uuid("run id", *run_id) : absl::OkStatus(), input));
  const bool by_alias = by == StartBy::kAlias;
  const char* sql = returns == StartReturns::kState
                        ? (by_alias ? internal::kStartFlow : internal::kStartFlowBySlug)
                        : (by_alias ? internal::kStartRun : internal::kStartRunBySlug);
  absl::StatusOr<pg::Result> r =
      conn.exec(sql, {std::string(name), std::move(request.input_json), run_id});
  if (!r.ok()) return start_error(r.status(), request.what);
  return std::string(r->scalar());
}

// An idempotency key or a signal id (`what`, capitalized): 1 to 255 characters of text
// PostgreSQL can hold (the database's rule, checked here first with its SQLSTATE, 22023, so
// that a caller's transaction is not aborted by it).
absl::Status check_short_id(const std::string& what, std::string_view id) {
  PGFLOW_RETURN_IF_ERROR(check_text(absl::AsciiStrToLower(what), id));
  const auto characters = std::count_if(id.begin(), id.end(), [](char c) {
    return (static_cast<unsigned char>(c) & 0xC0) != 0x80;  // not a UTF-8 continuation byte
  });
  if (characters >= 1 && characters <= 255) return absl::OkStatus();
  return pg::database_error(
      "22023", absl::StrCat("pgflow: ", what, " must be 1 to 255 characters (got ", characters,
                            " characters)"));
}

absl::StatusOr<IdempotentStart> exec_start_idempotent(pg::Connection& conn, StartBy by,
                                                      std::string_view name,
                                                      const nlohmann::json& input,
                                                      std::string_view key) {
  PGFLOW_ASSIGN_OR_RETURN(StartRequest request,
                          start_request(by, name, check_short_id("Idempotency key", key), input));
  const char* sql =
      by == StartBy::kAlias ? internal::kStartRunIdempotent : internal::kStartRunIdempotentBySlug;
  absl::StatusOr<pg::Result> r =
      conn.exec(sql, {std::string(name), std::move(request.input_json), std::string(key)});
  if (!r.ok()) return start_error(r.status(), request.what);
  PGFLOW_ASSIGN_OR_RETURN(bool created, r->boolean(0, 1));
  return IdempotentStart{std::string(r->text(0, 0)), created};
}

absl::StatusOr<RunState> start_on(pg::Connection& conn, StartBy by, std::string_view name,
                                  const nlohmann::json& input,
                                  const std::optional<std::string>& run_id) {
  PGFLOW_ASSIGN_OR_RETURN(std::string state,
                          exec_start(conn, by, StartReturns::kState, name, input, run_id));
  return parse_run(state, run_id.value_or(""));
}

// ---- run control: the same calls for Client and Transaction ----

// The database's error, prefixed with what was asked ("cancelling run X failed: ...").
absl::Status run_control_error(const absl::Status& s, std::string_view verb,
                               std::string_view run_id) {
  return with_message(s, absl::StrCat("pgflow: ", internal::absl_view(verb), " run ",
                                      internal::absl_view(run_id), " failed: ", s.message()));
}

absl::StatusOr<bool> cancel_on(pg::Connection& conn, std::string_view run_id,
                               const std::optional<std::string>& reason) {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  if (reason) PGFLOW_RETURN_IF_ERROR(check_text("cancel reason", *reason));
  absl::StatusOr<pg::Result> r = conn.exec(internal::kCancelRun, {std::string(run_id), reason});
  if (!r.ok()) return run_control_error(r.status(), "cancelling", run_id);
  return r->scalar() == "t";
}

absl::StatusOr<std::string> retry_on(pg::Connection& conn, std::string_view run_id,
                                     const std::optional<std::string>& new_run_id) {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  if (new_run_id) PGFLOW_RETURN_IF_ERROR(check_uuid("new run id", *new_run_id));
  absl::StatusOr<pg::Result> r = conn.exec(internal::kRetryRun, {std::string(run_id), new_run_id});
  if (!r.ok()) return run_control_error(r.status(), "retrying", run_id);
  return std::string(r->scalar());
}

absl::Status set_priority_on(pg::Connection& conn, std::string_view run_id, int priority) {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  absl::StatusOr<pg::Result> r =
      conn.exec(internal::kSetRunPriority, {std::string(run_id), std::to_string(priority)});
  if (r.ok()) return absl::OkStatus();
  if (pg::is_missing_function(r.status())) {
    return with_message(r.status(),
                        "pgflow: run priorities need pgflow schema 0018: run `pgflow "
                        "migrate` (pgflow.set_run_priority does not exist)");
  }
  return run_control_error(r.status(), "prioritizing", run_id);
}

absl::StatusOr<SignalOutcome> signal_on(pg::Connection& conn, std::string_view run_id,
                                        std::string_view step_slug, std::string_view signal_id,
                                        const nlohmann::json& payload, int task_index) {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  PGFLOW_RETURN_IF_ERROR(check_name("step slug", step_slug));
  PGFLOW_RETURN_IF_ERROR(check_short_id("Signal id", signal_id));
  if (task_index < 0) {
    return pg::database_error(
        "22023", absl::StrCat("pgflow: task index must not be negative (got ", task_index, ")"));
  }
  PGFLOW_ASSIGN_OR_RETURN(std::string payload_json, input_text(payload, "the signal's payload"));
  absl::StatusOr<pg::Result> r = conn.exec(
      internal::kSendSignal, {std::string(run_id), std::string(step_slug), std::string(signal_id),
                              std::move(payload_json), std::to_string(task_index)});
  if (!r.ok()) {
    if (pg::is_missing_function(r.status())) {
      return with_message(r.status(),
                          "pgflow: signals need pgflow schema 0021: run `pgflow migrate` "
                          "(pgflow.send_signal does not exist)");
    }
    return run_control_error(r.status(), "signalling", run_id);
  }
  const std::string_view outcome = r->scalar();
  if (outcome == "delivered") return SignalOutcome::kDelivered;
  if (outcome == "buffered") return SignalOutcome::kBuffered;
  return SignalOutcome::kDuplicate;
}

absl::StatusOr<RunState> resume_on(pg::Connection& conn, std::string_view run_id) {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  absl::StatusOr<pg::Result> r = conn.exec(internal::kResumeRun, {std::string(run_id)});
  if (!r.ok()) return run_control_error(r.status(), "resuming", run_id);
  // A second statement: the resumption's changes are visible to it (not to a nested call).
  PGFLOW_ASSIGN_OR_RETURN(pg::Result state, conn.exec(internal::kGetRun, {std::string(run_id)}));
  return parse_run(state.is_null(0, 0) ? std::string_view() : state.scalar(), run_id);
}

absl::StatusOr<std::vector<FlowAlias>> parse_aliases(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (!j.is_array()) return absl::InternalError("pgflow: the alias query returned unparsable JSON");
  std::vector<FlowAlias> aliases;
  for (const nlohmann::json& a : j) {
    FlowAlias alias{
        a.value("alias", ""), internal::json_string(a, "active_flow_slug"), {}, std::nullopt};
    PGFLOW_ASSIGN_OR_RETURN(alias.updated_at, internal::json_timestamp(a, "updated_at"));
    for (const nlohmann::json& v : a.value("versions", nlohmann::json::array())) {
      alias.versions.push_back(v.get<std::string>());
    }
    aliases.push_back(std::move(alias));
  }
  return aliases;
}

class TransactionImpl final : public Transaction {
 public:
  explicit TransactionImpl(pg::Connection& conn) : conn_(conn) {}
  absl::StatusOr<Rows> exec(std::string_view sql,
                            const std::vector<std::optional<std::string>>& params) const override {
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r, conn_.exec(sql, params));
    Rows rows(static_cast<size_t>(r.rows()));
    for (int i = 0; i < r.rows(); ++i) {
      for (int c = 0; c < r.columns(); ++c) {
        rows[static_cast<size_t>(i)].push_back(
            r.is_null(i, c) ? std::nullopt : std::optional<std::string>(std::string(r.text(i, c))));
      }
    }
    return rows;
  }

 private:
  // Everything runs in the caller's transaction (already atomic).
  absl::Status on_connection(bool,
                             absl::FunctionRef<absl::Status(pg::Connection&)> op) const override {
    return op(conn_);
  }
  pg::Connection& conn_;
};

std::optional<std::string> lowercase(std::optional<std::string> s) {
  if (s) *s = internal::ascii_lower(*s);
  return s;
}

// Any login may NOTIFY on the events channel: a payload that is not an object of strings is
// someone else's and is ignored (never an exception on the listening thread).
std::optional<RunEvent> parse_event(const std::string& payload) {
  nlohmann::json j = nlohmann::json::parse(payload, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return std::nullopt;
  RunEvent event;
  for (auto [key, field] :
       {std::pair{"event", &event.event}, std::pair{"run_id", &event.run_id},
        std::pair{"flow_slug", &event.flow_slug}, std::pair{"step_slug", &event.step_slug},
        std::pair{"status", &event.status}}) {
    auto it = j.find(key);
    if (it == j.end()) continue;
    if (!it->is_string()) return std::nullopt;
    *field = it->get<std::string>();
  }
  return event;
}

}  // namespace

// ---- Client ----

class Client::Impl {
 public:
  explicit Impl(ClientConfig client_config)
      : config(std::move(client_config)),
        pool(config.connection_string, "pgflow-client", config.max_connections,
             config.acquire_timeout) {}
  ClientConfig config;
  pg::Pool pool;
};

absl::StatusOr<Client> Client::connect(ClientConfig config) {
  std::optional<std::string> url = pg::connection_string_or_env(config.connection_string);
  if (!url) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid ClientConfig: ", pg::no_database("connection_string")));
  }
  config.connection_string = *std::move(url);
  if (config.max_connections < 1 || config.max_connections > 100) {
    return absl::InvalidArgumentError("invalid ClientConfig: max_connections must be 1..100");
  }
  if (config.poll_only && !config.listen_connection_string.empty()) {
    return absl::InvalidArgumentError(
        "invalid ClientConfig: poll_only and listen_connection_string exclude each other: the "
        "client either LISTENs (on listen_connection_string) or polls; set one of them");
  }
  if (config.connect_timeout.count() < 0) {
    return absl::InvalidArgumentError("invalid ClientConfig: connect_timeout must not be negative");
  }
  const std::chrono::milliseconds connect_timeout = config.connect_timeout;
  auto impl = std::make_shared<Impl>(std::move(config));
  PGFLOW_RETURN_IF_ERROR(
      pg::retry_while_unreachable(connect_timeout, "connect_timeout", [&impl](int) -> absl::Status {
        PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl->pool.acquire());
        return pg::require_pgflow_schema(*conn);
      }));
  return Client(std::move(impl));
}

absl::Status Client::on_connection(bool atomic,
                                   absl::FunctionRef<absl::Status(pg::Connection&)> op) const {
  PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
  if (!atomic) return op(*conn);
  return pg::in_transaction(*conn, [&] { return op(*conn); });
}

// ---- RunControl: each call on the connection its owner gives (a Client's pooled one, or a
// Transaction's) ----

absl::StatusOr<RunState> RunControl::start_flow(std::string_view flow_alias,
                                                const nlohmann::json& input,
                                                std::optional<std::string> run_id) const {
  absl::StatusOr<RunState> state = absl::UnknownError("pgflow: start_flow did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    state = start_on(c, StartBy::kAlias, flow_alias, input, run_id);
    return state.status();
  }));
  return state;
}

absl::StatusOr<RunState> RunControl::start_flow_by_alias(std::string_view flow_alias,
                                                         const nlohmann::json& input,
                                                         std::optional<std::string> run_id) const {
  return start_flow(flow_alias, input, std::move(run_id));
}

absl::StatusOr<RunState> RunControl::start_flow_by_slug(std::string_view flow_slug,
                                                        const nlohmann::json& input,
                                                        std::optional<std::string> run_id) const {
  absl::StatusOr<RunState> state = absl::UnknownError("pgflow: start_flow_by_slug did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    state = start_on(c, StartBy::kSlug, flow_slug, input, run_id);
    return state.status();
  }));
  return state;
}

absl::StatusOr<std::string> RunControl::start_run(std::string_view flow_alias,
                                                  const nlohmann::json& input,
                                                  std::optional<std::string> run_id) const {
  absl::StatusOr<std::string> id = absl::UnknownError("pgflow: start_run did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    id = exec_start(c, StartBy::kAlias, StartReturns::kRunId, flow_alias, input, run_id);
    return id.status();
  }));
  return id;
}

absl::StatusOr<std::string> RunControl::start_run_by_slug(std::string_view flow_slug,
                                                          const nlohmann::json& input,
                                                          std::optional<std::string> run_id) const {
  absl::StatusOr<std::string> id = absl::UnknownError("pgflow: start_run_by_slug did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    id = exec_start(c, StartBy::kSlug, StartReturns::kRunId, flow_slug, input, run_id);
    return id.status();
  }));
  return id;
}

absl::StatusOr<IdempotentStart> RunControl::start_run_idempotent(
    std::string_view flow_alias, const nlohmann::json& input,
    std::string_view idempotency_key) const {
  absl::StatusOr<IdempotentStart> started =
      absl::UnknownError("pgflow: start_run_idempotent did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    started = exec_start_idempotent(c, StartBy::kAlias, flow_alias, input, idempotency_key);
    return started.status();
  }));
  return started;
}

absl::StatusOr<IdempotentStart> RunControl::start_run_idempotent_by_slug(
    std::string_view flow_slug, const nlohmann::json& input,
    std::string_view idempotency_key) const {
  absl::StatusOr<IdempotentStart> started =
      absl::UnknownError("pgflow: start_run_idempotent_by_slug did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    started = exec_start_idempotent(c, StartBy::kSlug, flow_slug, input, idempotency_key);
    return started.status();
  }));
  return started;
}

absl::StatusOr<bool> RunControl::cancel_run(std::string_view run_id,
                                            std::optional<std::string> reason) const {
  absl::StatusOr<bool> cancelled = absl::UnknownError("pgflow: cancel_run did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    cancelled = cancel_on(c, run_id, reason);
    return cancelled.status();
  }));
  return cancelled;
}

absl::StatusOr<std::string> RunControl::retry_run(std::string_view run_id,
                                                  std::optional<std::string> new_run_id) const {
  absl::StatusOr<std::string> retried = absl::UnknownError("pgflow: retry_run did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    retried = retry_on(c, run_id, new_run_id);
    return retried.status();
  }));
  return retried;
}

absl::Status RunControl::set_run_priority(std::string_view run_id, int priority) const {
  return on_connection(false,
                       [&](pg::Connection& c) { return set_priority_on(c, run_id, priority); });
}

std::string_view to_string(SignalOutcome outcome) {
  switch (outcome) {
    case SignalOutcome::kDelivered:
      return "delivered";
    case SignalOutcome::kBuffered:
      return "buffered";
    case SignalOutcome::kDuplicate:
      return "duplicate";
  }
  return "duplicate";
}

absl::StatusOr<SignalOutcome> RunControl::send_signal(std::string_view run_id,
                                                      std::string_view step_slug,
                                                      std::string_view signal_id,
                                                      const nlohmann::json& payload,
                                                      int task_index) const {
  absl::StatusOr<SignalOutcome> sent = absl::UnknownError("pgflow: send_signal did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(false, [&](pg::Connection& c) {
    sent = signal_on(c, run_id, step_slug, signal_id, payload, task_index);
    return sent.status();
  }));
  return sent;
}

absl::StatusOr<RunState> RunControl::resume_run(std::string_view run_id) const {
  // The resumption and the read of what it left in one transaction: a failed read undoes the
  // resumption instead of reporting an error for a run that did resume.
  absl::StatusOr<RunState> state = absl::UnknownError("pgflow: resume_run did not run");
  PGFLOW_RETURN_IF_ERROR(on_connection(true, [&](pg::Connection& c) {
    state = resume_on(c, run_id);
    return state.status();
  }));
  return state;
}

absl::StatusOr<FlowAlias> Client::activate_flow_version(
    std::string_view flow_alias, std::string_view flow_slug,
    std::optional<std::string> expected_current) const {
  PGFLOW_RETURN_IF_ERROR(check_name("flow alias", flow_alias));
  PGFLOW_RETURN_IF_ERROR(check_name("flow slug", flow_slug));
  if (expected_current) PGFLOW_RETURN_IF_ERROR(check_name("expected flow slug", *expected_current));
  PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
  absl::StatusOr<pg::Result> activated =
      conn->exec(internal::kActivateFlowVersion,
                 {std::string(flow_alias), std::string(flow_slug), std::move(expected_current)});
  if (!activated.ok()) {
    return with_message(activated.status(),
                        absl::StrCat("pgflow: activating flow \"", internal::absl_view(flow_slug),
                                     "\" for alias \"", internal::absl_view(flow_alias),
                                     "\" failed: ", activated.status().message()));
  }
  PGFLOW_ASSIGN_OR_RETURN(std::vector<FlowAlias> aliases, parse_aliases(activated->scalar()));
  if (aliases.size() != 1) return absl::InternalError("pgflow: the activated alias is not listed");
  return std::move(aliases.front());
}

absl::StatusOr<std::vector<FlowAlias>> Client::flow_aliases() const {
  PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
  PGFLOW_ASSIGN_OR_RETURN(pg::Result r, conn->exec(internal::kFlowAliases));
  return parse_aliases(r.scalar());
}

absl::StatusOr<RunState> Client::get_run(std::string_view run_id) const {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  for (int attempt = 0;; ++attempt) {
    PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
    absl::StatusOr<pg::Result> r = conn->exec(internal::kGetRun, {std::string(run_id)});
    // A pooled connection may have died while idle (server restart): a read is safe to repeat
    // once on a fresh one.
    if (!r.ok() && !conn->healthy() && attempt == 0) continue;
    if (!r.ok()) return r.status();
    return parse_run(r->is_null(0, 0) ? std::string_view() : r->scalar(), run_id);
  }
}

absl::StatusOr<RunState> Client::wait_for_run(std::string_view run_id,
                                              std::chrono::milliseconds timeout) const {
  PGFLOW_RETURN_IF_ERROR(check_uuid("run id", run_id));
  const auto deadline = std::chrono::steady_clock::now() + internal::at_most_forever(timeout);
  auto not_finished = [&](const RunState& state) {
    return absl::DeadlineExceededError(absl::StrCat(
        "pgflow: run ", internal::absl_view(run_id), " did not finish within ", timeout.count(),
        " ms (status ", internal::absl_view(to_string(state.status)), ")"));
  };
  const ClientConfig& config = impl_->config;
  if (config.poll_only) {
    std::chrono::milliseconds delay = internal::kFirstReread;
    while (true) {
      PGFLOW_ASSIGN_OR_RETURN(RunState state, get_run(run_id));
      if (state.finished()) return state;
      const auto now = std::chrono::steady_clock::now();
      if (now >= deadline) return not_finished(state);
      std::this_thread::sleep_for(
          std::min<std::chrono::steady_clock::duration>(delay, deadline - now));
      delay = internal::next_reread(delay);
    }
  }
  // On a connection that LISTENs for run events: re-reads the run when one of its run events
  // arrives, and at least every internal::kRereadInterval (events may be off: pgflow.notify_events).
  auto wait_on = [&](pg::Connection& conn) -> absl::StatusOr<RunState> {
    while (true) {
      PGFLOW_ASSIGN_OR_RETURN(pg::Result r, conn.exec(internal::kGetRun, {std::string(run_id)}));
      PGFLOW_ASSIGN_OR_RETURN(RunState state,
                              parse_run(r.is_null(0, 0) ? std::string_view() : r.scalar(), run_id));
      if (state.finished()) return state;
      const auto reread_at =
          std::min(deadline, std::chrono::steady_clock::now() + internal::kRereadInterval);
      while (true) {
        PGFLOW_ASSIGN_OR_RETURN(std::optional<pg::Notification> n,
                                conn.wait_notification(reread_at));
        if (!n && reread_at < deadline) break;
        if (!n) return not_finished(state);
        std::optional<RunEvent> event = parse_event(n->payload);
        // Compare with the canonical id the database returned (callers may pass another
        // spelling of the same UUID).
        if (event && event->run_id == state.run_id && event->event.rfind("run:", 0) == 0) break;
      }
    }
  };
  if (!config.listen_connection_string.empty() &&
      config.listen_connection_string != config.connection_string) {
    // A direct connection of its own, for as long as it waits (LISTEN before the first read: a
    // change committed after the read is then always notified).
    PGFLOW_ASSIGN_OR_RETURN(
        pg::Connection direct,
        pg::Connection::open(config.listen_connection_string, "pgflow-client-wait"));
    PGFLOW_RETURN_IF_ERROR(direct.listen(internal::kEventsChannel));
    return wait_on(direct);
  }
  for (int attempt = 0;; ++attempt) {
    PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
    if (absl::Status listening = conn->listen(internal::kEventsChannel); !listening.ok()) {
      // The pooled connection died while idle (server restart): once more on a fresh one,
      // after giving this one back (the pool may have room for one connection only).
      if (!conn->healthy() && attempt == 0) continue;
      return listening;
    }
    absl::StatusOr<RunState> result = wait_on(*conn);
    // Leave the pooled connection as it was found.
    if (conn->healthy()) (void)conn->exec(internal::kUnlistenAll);
    return result;
  }
}

absl::Status Client::in_transaction(const std::function<absl::Status(Transaction&)>& body) const {
  PGFLOW_ASSIGN_OR_RETURN(pg::Pool::Lease conn, impl_->pool.acquire());
  TransactionImpl tx(*conn);
  return pg::in_transaction(*conn, [&] { return body(tx); });
}

// ---- subscriptions ----

class Subscription::Impl {
 public:
  Impl(std::string conninfo, std::function<void(const RunEvent&)> on_event,
       std::optional<std::string> run_id)
      : session_(std::move(conninfo), "pgflow-client-events", Logger(),
                 [](pg::Connection& c) { return c.listen(internal::kEventsChannel); }),
        on_event_(std::move(on_event)),
        run_id_(lowercase(std::move(run_id))) {}

  absl::Status start() {
    PGFLOW_RETURN_IF_ERROR(session_.connection().status());  // fail early, LISTEN established
    thread_ = std::jthread([this](std::stop_token stop) { loop(stop); });
    return absl::OkStatus();
  }

 private:
  void loop(const std::stop_token& stop) {
    internal::Backoff backoff;
    while (!stop.stop_requested()) {
      absl::StatusOr<pg::Connection*> conn = session_.connection();
      if (!conn.ok()) {
        internal::sleep_unless_stopped(backoff.next(), stop);
        continue;
      }
      auto n = (*conn)->wait_notification(
          std::chrono::steady_clock::now() + std::chrono::seconds(30), stop);
      // After a quiet period, a round trip proves the connection is still there (a silently
      // dropped connection would otherwise never deliver again).
      if (n.ok() && !n->has_value() && !stop.stop_requested()) n = probe(**conn);
      if (!n.ok()) {
        session_.reset();
        internal::sleep_unless_stopped(backoff.next(), stop);
        continue;
      }
      backoff.reset();
      if (!n->has_value()) continue;
      std::optional<RunEvent> event = parse_event((*n)->payload);
      if (event && (!run_id_ || event->run_id == *run_id_)) on_event_(*event);
    }
  }

  static absl::StatusOr<std::optional<pg::Notification>> probe(pg::Connection& conn) {
    if (absl::Status s = conn.exec(internal::kPing).status(); !s.ok()) return s;
    return std::optional<pg::Notification>();
  }

  pg::Session session_;
  std::function<void(const RunEvent&)> on_event_;
  std::optional<std::string> run_id_;
  std::jthread thread_;  // declared last: stops and joins first
};

Subscription::Subscription(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Subscription::Subscription(Subscription&&) noexcept = default;
Subscription& Subscription::operator=(Subscription&&) noexcept = default;
Subscription::~Subscription() = default;

absl::StatusOr<Subscription> Client::subscribe(std::function<void(const RunEvent&)> on_event,
                                               std::optional<std::string> run_id) const {
  if (run_id) PGFLOW_RETURN_IF_ERROR(check_uuid("run id", *run_id));
  const ClientConfig& config = impl_->config;
  if (config.poll_only) {
    return absl::FailedPreconditionError(
        "pgflow: a subscription LISTENs for events, and this client is poll-only: set "
        "ClientConfig::listen_connection_string to a direct connection (not a transaction "
        "pooler) to subscribe");
  }
  auto impl = std::make_unique<Subscription::Impl>(config.listen_connection_string.empty()
                                                       ? config.connection_string
                                                       : config.listen_connection_string,
                                                   std::move(on_event), std::move(run_id));
  PGFLOW_RETURN_IF_ERROR(impl->start());
  return Subscription(std::move(impl));
}

}  // namespace pgflow
