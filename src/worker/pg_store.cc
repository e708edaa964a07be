#include "worker/pg_store.h"

#include <optional>
#include <string_view>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "internal/backoff.h"
#include "internal/random.h"
#include "internal/status_macros.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pg/session.h"
#include "pg/shared_session.h"
#include "pgflow/status.h"
#include "worker/clock.h"
#include "worker/lost_claims.h"
#include "worker/statements.h"
#include "worker/store_listening.h"
#include "worker/task_rows.h"

namespace pgflow::internal {
namespace {

class PgStore final : public Store {
 public:
  // `statements` carries every statement; `listen`, when set, the LISTEN of a poller or
  // maintenance store (else it LISTENs on `statements`, unshared, or not at all).
  PgStore(std::shared_ptr<pg::SharedSession> statements, std::optional<pg::Session> listen,
          std::shared_ptr<bool> reconnected, const Logger& log)
      : log_(log),
        lost_claims_(log),
        statements_(statements),
        listening_(std::move(statements), std::move(listen), std::move(reconnected), log) {}

  absl::StatusOr<Handshake> handshake() override {
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r,
                            once([](pg::Connection& c) { return c.exec(kHandshakeQuery); }));
    PGFLOW_ASSIGN_OR_RETURN(std::int64_t protocol, r.int64(0, 0));
    return Handshake{.protocol = static_cast<int>(protocol),
                     .isolation = std::string(r.text(0, 1))};
  }

  // Whether the schema knows concurrency keys (0019); true when it cannot tell.
  bool schema_has_keys() {
    absl::StatusOr<pg::Result> r =
        once([](pg::Connection& c) { return c.exec(kSchemaHasConcurrencyKeys); });
    return !r.ok() || r->scalar() == "t";
  }

  absl::StatusOr<DeployOutcome> deploy(const Deployment& d) override {
    absl::StatusOr<pg::Result> deployed = once([&](pg::Connection& c) {
      const std::string protocol = std::to_string(d.protocol);
      if (d.flow_control.empty()) {
        return c.exec(kEnsureFlowCompiled,
                      {d.flow_slug, d.shape, protocol, d.queue_mode, d.route_map, d.flow_alias});
      }
      return c.exec(kEnsureFlowCompiledWithFlowControl,
                    {d.flow_slug, d.shape, protocol, d.queue_mode, d.route_map, d.flow_alias,
                     d.flow_control});
    });
    if (!deployed.ok() && !d.flow_control.empty() && pg::is_missing_function(deployed.status())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pgflow: flow \"", d.flow_slug,
          "\" has concurrency limits, which this database's pgflow schema does not support "
          "(they need schema 0018: run `pgflow migrate`)"));
    }
    // Schema 0018 has limits but not keys: it refuses them as options it does not know.
    if (!deployed.ok() && sql_state(deployed.status()) == "22023" &&
        absl::StrContains(d.flow_control, "\"concurrencyKey\"") && !schema_has_keys()) {
      return absl::FailedPreconditionError(absl::StrCat(
          "pgflow: flow \"", d.flow_slug,
          "\" has a concurrency key, which this database's pgflow schema does not support "
          "(keys need schema 0019: run `pgflow migrate`)"));
    }
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r, std::move(deployed));
    std::optional<nlohmann::json> json = parse_json(r.scalar());
    if (!json) return absl::InternalError("ensure_flow_compiled returned unparsable JSON");
    DeployOutcome out;
    out.status = json->value("status", "");
    for (const auto& diff : json->value("differences", nlohmann::json::array()))
      out.differences.push_back(diff.get<std::string>());
    const nlohmann::json kind = json->value("mismatchKind", nlohmann::json());
    if (kind.is_string()) out.mismatch_kind = kind.get<std::string>();
    out.activation = json->value("activation", "");
    out.flow_alias = json->value("flow_alias", "");
    const nlohmann::json active = json->value("active_flow_slug", nlohmann::json());
    if (active.is_string()) out.active_flow_slug = active.get<std::string>();
    return out;
  }

  absl::Status register_worker(const Registration& r, bool again) override {
    absl::StatusOr<pg::Result> registered = once([&](pg::Connection& c) {
      return c.exec(kRegisterWorker, {r.worker_id, r.function_name, r.flow_slug, r.queue,
                                      std::to_string(r.protocol)});
    });
    if (!registered.ok() && again && sql_state(registered.status()) == "23505") {
      // An earlier attempt registered this worker and lost the reply: that registration stands.
      PGFLOW_ASSIGN_OR_RETURN(pg::Result mine, once([&](pg::Connection& c) {
                                return c.exec(kOwnRegistration, {r.worker_id, r.function_name});
                              }));
      if (mine.scalar() == "1") return absl::OkStatus();
    }
    return registered.status();
  }

  absl::StatusOr<std::vector<ClaimedMessage>> claim(const ClaimRequest& q,
                                                    const std::stop_token& stop) override {
    const pg::Param step = q.step.empty() ? pg::Param() : pg::Param(q.step);
    std::string claim_id;
    absl::StatusOr<pg::Result> claimed = retry<pg::Result>(
        stop, "claim tasks", [&](pg::Connection& c) -> absl::StatusOr<pg::Result> {
          PGFLOW_RETURN_IF_ERROR(lost_claims_.release(c, q.worker_id));
          // A new id for every try: a released id claims nothing (schema 0030), and the try
          // before may have been released just now. Until its reply arrives, this claim may
          // commit unseen.
          claim_id = random_uuid();
          lost_claims_.sent(claim_id);
          absl::StatusOr<pg::Result> r =
              c.exec(kReadAndClaim, {q.queue, q.flow_slug, std::to_string(q.visibility_timeout_s),
                                     std::to_string(q.slots), q.worker_id, step, claim_id});
          if (r.ok() || c.healthy()) lost_claims_.answered();  // answered, or refused
          return r;
        });
    PGFLOW_ASSIGN_OR_RETURN(pg::Result rows, std::move(claimed));
    std::vector<ClaimedMessage> out;
    for (int i = 0; i < rows.rows(); ++i) {
      ClaimedMessage m;
      m.outcome = std::string(rows.text(i, 0));
      m.message_id = std::string(rows.text(i, 1));
      m.reason = std::string(rows.text(i, 8));
      if (m.outcome == "claimed") {
        m.run_id = std::string(rows.text(i, 2));
        m.step_slug = std::string(rows.text(i, 3));
        m.task_index = static_cast<int>(rows.int64(i, 4).value_or(0));
        m.attempt = static_cast<int>(rows.int64(i, 5).value_or(1));
        m.claim_id = claim_id;
        absl::StatusOr<nlohmann::json> input = read_input(rows.text(i, 6));
        if (input.ok()) {
          m.input = *std::move(input);
        } else {
          m.input_problem = std::string(input.status().message());
        }
        if (!rows.is_null(i, 7)) {
          // (One that cannot be read is left to run_input, which says why.)
          if (absl::StatusOr<nlohmann::json> run_input = read_input(rows.text(i, 7));
              run_input.ok())
            m.flow_input = *std::move(run_input);
        }
        m.timeout_seconds = static_cast<int>(rows.int64(i, 9).value_or(60));
      }
      out.push_back(std::move(m));
    }
    return out;
  }

  void wait_for_work(Clock::Time until, const std::stop_token& stop) override {
    listening_.wait_for_work(until, stop);
  }

  absl::StatusOr<bool> has_visible_work(const std::string& worker_id,
                                        const std::stop_token& stop) override {
    absl::StatusOr<pg::Result> r =
        retry<pg::Result>(stop, "look at the queue",
                          [&](pg::Connection& c) { return c.exec(kHasVisibleWork, {worker_id}); });
    if (!r.ok() && pg::is_missing_function(r.status())) {
      return absl::UnimplementedError(
          "the database has no pgflow.has_visible_work (schema older than 0020: run `pgflow "
          "migrate`)");
    }
    if (!r.ok()) return r.status();
    return r->scalar() == "t";
  }

  absl::StatusOr<std::vector<ReportedTask>> complete_tasks(const std::vector<TaskResult>& results,
                                                           const std::stop_token& stop) override {
    return report(kCompleteBatch, "complete tasks", task_rows(results, true), stop);
  }
  absl::StatusOr<std::vector<ReportedTask>> fail_tasks(const std::vector<TaskResult>& results,
                                                       const std::stop_token& stop) override {
    return report(kFailBatch, "fail tasks", task_rows(results, false), stop);
  }

  absl::StatusOr<bool> heartbeat(const std::string& worker_id,
                                 const std::stop_token& stop) override {
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r,
                            retry<pg::Result>(stop, "heartbeat", [&](pg::Connection& c) {
                              return c.exec(kHeartbeat, {worker_id});
                            }));
    if (r.rows() == 0 || r.is_null(0, 0)) {
      return absl::NotFoundError(
          absl::StrCat("worker ", worker_id, " has no row in pgflow.workers"));
    }
    return r.scalar() == "t";
  }

  absl::StatusOr<std::optional<std::string>> pause_reason(const std::string& worker_id,
                                                          const std::stop_token& stop) override {
    PGFLOW_ASSIGN_OR_RETURN(
        pg::Result r, retry<pg::Result>(stop, "read the function's pause", [&](pg::Connection& c) {
          return c.exec(kPauseReason, {worker_id});
        }));
    if (r.rows() == 0 || r.is_null(0, 0)) return std::optional<std::string>();
    return std::optional<std::string>(std::string(r.scalar()));
  }

  absl::StatusOr<std::optional<int>> recover_stalled_tasks(std::chrono::milliseconds unless_within,
                                                           const std::stop_token& stop) override {
    const std::string within = absl::StrCat(unless_within.count(), " milliseconds");
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r,
                            retry<pg::Result>(stop, "stall recovery", [&](pg::Connection& c) {
                              return c.exec(kRecoverStalledTasks, {within});
                            }));
    if (r.is_null(0, 0)) return std::optional<int>();
    PGFLOW_ASSIGN_OR_RETURN(std::int64_t requeued, r.int64(0, 0));
    return std::optional<int>(static_cast<int>(requeued));
  }

  absl::StatusOr<int> wake_waiting_tasks(int max_runs, const std::stop_token& stop) override {
    absl::StatusOr<pg::Result> r = retry<pg::Result>(
        stop, "wait step timers",
        [&](pg::Connection& c) { return c.exec(kWakeWaitingTasks, {absl::StrCat(max_runs)}); });
    if (!r.ok() && pg::is_missing_function(r.status())) {
      return absl::UnimplementedError(
          "the database has no pgflow.wake_waiting_tasks (schema older than 0021: run `pgflow "
          "migrate`)");
    }
    PGFLOW_RETURN_IF_ERROR(r.status());
    PGFLOW_ASSIGN_OR_RETURN(std::int64_t ended, r->int64(0, 0));
    return static_cast<int>(ended);
  }

  absl::StatusOr<std::string> stall_recovery_holders(std::chrono::milliseconds held_for,
                                                     const std::stop_token& stop) override {
    PGFLOW_ASSIGN_OR_RETURN(
        pg::Result r,
        retry<pg::Result>(stop, "stall recovery lock holders", [&](pg::Connection& c) {
          return c.exec(kStallRecoveryHolders, {absl::StrCat(held_for.count(), " milliseconds")});
        }));
    return r.rows() > 0 ? std::string(r.scalar()) : std::string("unknown");
  }

  bool wait_for_stop_announcements(Clock::Time until, const std::stop_token& stop) override {
    return listening_.wait_for_stop_announcements(until, stop);
  }

  absl::StatusOr<std::vector<std::uint64_t>> unwanted_tasks(const std::vector<TaskRef>& tasks,
                                                            const std::string& worker_id,
                                                            const std::stop_token& stop) override {
    nlohmann::json rows = nlohmann::json::array();
    for (const TaskRef& t : tasks) {
      rows.push_back({{"id", t.id},
                      {"run_id", t.run_id},
                      {"step_slug", t.step_slug},
                      {"task_index", t.task_index}});
    }
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r,
                            once(
                                [&](pg::Connection& c) {
                                  return c.exec(kUnwantedTasks, {rows.dump(), worker_id});
                                },
                                stop));
    std::vector<std::uint64_t> ids;
    for (int i = 0; i < r.rows(); ++i)
      ids.push_back(static_cast<std::uint64_t>(r.int64(i, 0).value_or(-1)));
    return ids;
  }

  absl::Status mark_stopped(const std::string& worker_id, const std::stop_token& stop) override {
    return retry<pg::Result>(stop, "mark worker stopped",
                             [&](pg::Connection& c) { return c.exec(kMarkStopped, {worker_id}); })
        .status();
  }

  absl::StatusOr<nlohmann::json> run_input(const std::string& run_id,
                                           const std::stop_token& stop) override {
    PGFLOW_ASSIGN_OR_RETURN(
        std::string text,
        retry<std::string>(stop, "load run input",
                           [&](pg::Connection& c) -> absl::StatusOr<std::string> {
                             PGFLOW_ASSIGN_OR_RETURN(pg::Result r, c.exec(kRunInput, {run_id}));
                             if (r.rows() == 0)
                               return absl::NotFoundError("run " + run_id + " does not exist");
                             return std::string(r.scalar());
                           }));
    absl::StatusOr<nlohmann::json> input = read_input(text);
    if (!input.ok()) {
      // Every attempt would read the same input.
      return permanent(absl::InvalidArgumentError(
          absl::StrCat("pgflow: the input of run ", run_id, " ", input.status().message())));
    }
    return input;
  }

  void release_lost_claims(const std::string& worker_id) override {
    if (lost_claims_.empty()) return;
    Backoff backoff(std::chrono::milliseconds(100), std::chrono::seconds(1));  // not an outage's
    const absl::Status released =
        system_clock().within(std::chrono::seconds(5), [&](const std::stop_token& five_s) {
          return statements_
              ->retry<pg::Result>(
                  five_s, "give back lost claims", backoff, log_,
                  [&](pg::Connection& c) -> absl::StatusOr<pg::Result> {
                    PGFLOW_RETURN_IF_ERROR(lost_claims_.release(c, worker_id, five_s));
                    return pg::Result();
                  })
              .status();
        });
    lost_claims_.give_up(released.ok() ? "not given back within 5 s"
                                       : std::string(released.message()));
  }

  void disconnect() override {
    statements_->disconnect();
    listening_.disconnect();
  }

 private:
  // Runs `op` once on the connection (startup calls: their caller retries); a broken
  // connection is dropped, so the next call reconnects.
  absl::StatusOr<pg::Result> once(
      const std::function<absl::StatusOr<pg::Result>(pg::Connection&)>& op,
      const std::stop_token& stop = {}) {
    return statements_->run(stop, [&](pg::Session& s) { return s.attempt<pg::Result>(op); });
  }

  // Session::retry on the statement session, a turn per try (SharedSession::retry).
  template <typename T>
  absl::StatusOr<T> retry(const std::stop_token& stop, std::string_view what,
                          const std::function<absl::StatusOr<T>(pg::Connection&)>& op) {
    return statements_->retry<T>(stop, what, backoff_, log_, op);
  }

  absl::StatusOr<std::vector<ReportedTask>> report(const char* sql, std::string_view what,
                                                   const std::string& rows,
                                                   const std::stop_token& stop) {
    PGFLOW_ASSIGN_OR_RETURN(pg::Result r, retry<pg::Result>(stop, what, [&](pg::Connection& c) {
                              return c.exec(sql, {rows});
                            }));
    return reported(r);
  }

  Logger log_;
  internal::Backoff backoff_;  // between tries of retry
  LostClaims lost_claims_;     // the poller's claims whose reply never arrived
  std::shared_ptr<pg::SharedSession> statements_;
  StoreListening listening_;
};

}  // namespace

std::unique_ptr<Store> pg_store(std::shared_ptr<pg::SharedSession> statements,
                                std::optional<pg::Session> listen,
                                std::shared_ptr<bool> reconnected, const Logger& log) {
  return std::make_unique<PgStore>(std::move(statements), std::move(listen), std::move(reconnected),
                                   log);
}

}  // namespace pgflow::internal
