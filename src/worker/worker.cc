// EdgeWorker: startup, the poller, handler execution and task deadlines, heartbeats and stall
// recovery, and the orderly stop. Reporting lives in reporter.cc.
#include "pgflow/worker.h"

#include <signal.h>

#include <atomic>
#include <cctype>
#include <chrono>
#include <cstdlib>
#include <map>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "internal/backoff.h"
#include "internal/random.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pg/session.h"
#include "pg/startup_retry.h"
#include "pgflow/status.h"
#include "worker/executor.h"
#include "worker/flow_input_cache.h"
#include "worker/reporter.h"

namespace pgflow {
namespace {

using Clock = std::chrono::steady_clock;
using pg::Session;

// The worker protocol this library speaks (pgflow.worker_protocol() in the database).
constexpr int kWorkerProtocol = 5;

// Reads up to $4 messages and claims them in one round trip ($6: the step of a step worker,
// else NULL). The read and the claim commit together, so a failed claim leaves the messages
// visible.
constexpr char kReadAndClaim[] = R"sql(
select c.outcome, c.msg_id::text, c.run_id::text, c.step_slug, c.task_index, c.attempt,
       c.input::text, c.flow_input::text, c.reason, c.timeout
from pgflow.claim_tasks($1, $2,
                        array(select m.msg_id from pgmq.read($1, $3::int, $4::int) m),
                        $5::uuid, $6) c
)sql";

// One stall recovery pass (schema 0012): NULL when another session holds the lock.
constexpr char kRecoverStalledTasks[] = "select pgflow.requeue_stalled_tasks()";
// Who holds the stall recovery lock and has held it for at least $1 (an interval).
constexpr char kStallRecoveryHolders[] = R"sql(
select pgflow._lock_holders(l.xmax, 'pgflow.locks', now() - $1::interval)
from pgflow.locks l where l.lock_name = 'stall_recovery'
)sql";
// Recovery skipped for this many intervals in a row is worth a warning.
constexpr int kStallRecoveryWarnAfter = 4;

// Which of the tasks this worker runs ($1: [{"id", "run_id", "step_slug", "task_index"}]) the
// database no longer wants from it: cancelled or skipped, finished, claimed again by another
// worker, or gone.
constexpr char kUnwantedTasks[] = R"sql(
select k.id
from jsonb_to_recordset($1::jsonb) as k(id bigint, run_id uuid, step_slug text, task_index int)
left join pgflow.step_tasks t on t.run_id = k.run_id and t.step_slug = k.step_slug and t.task_index = k.task_index
where t.status is distinct from 'started' or t.last_worker_id is distinct from $2::uuid
)sql";


std::string step_list(const FlowDefinition& flow) {
  std::vector<std::string> slugs;
  for (const StepDefinition& step : flow.steps) slugs.push_back(step.slug);
  return absl::StrJoin(slugs, ", ");
}

// Which step the worker serves: none for a flow with one queue, exactly one of its steps for a
// step-queued flow.
std::optional<std::string> step_problem(const WorkerConfig& c, const FlowDefinition& flow) {
  if (flow.queue_mode == QueueMode::kFlow) {
    if (c.step.empty()) return std::nullopt;
    return absl::StrCat("step is \"", c.step, "\", but flow \"", flow.slug,
                        "\" has one queue for all its steps, so its workers serve every step; leave step "
                        "empty, or give each step its own queue with pgflow::with_step_queues");
  }
  if (c.step.empty()) {
    return absl::StrCat("flow \"", flow.slug, "\" has one queue per step and a worker serves one of them (",
                        step_list(flow), "): start it with EdgeWorker::start(flow, pgflow::only_step<\"slug\">, ...) "
                        "or set WorkerConfig::step; run one worker per step, in one process or several");
  }
  if (flow.find(c.step) == nullptr) {
    return absl::StrCat("step \"", c.step, "\" is not a step of flow \"", flow.slug, "\" (its steps: ",
                        step_list(flow), ")");
  }
  return std::nullopt;
}

absl::Status validate(WorkerConfig& c, const FlowDefinition& flow) {
  std::vector<std::string> problems;
  if (std::optional<std::string> url = pg::connection_string_or_env(c.connection_string)) {
    c.connection_string = *std::move(url);
  } else {
    problems.push_back("connection_string is empty and DATABASE_URL is not set");
  }
  if (std::optional<std::string> problem = step_problem(c, flow)) problems.push_back(*problem);
  if (c.function_name.empty()) {
    c.function_name = c.step.empty() ? absl::StrCat(flow.slug, "-worker")
                                     : absl::StrCat(flow.slug, "-", c.step, "-worker");
  }
  if (c.max_concurrent < 1 || c.max_concurrent > 1000) problems.push_back("max_concurrent must be 1..1000");
  if (c.batch_size < 1 || c.batch_size > 1000) problems.push_back("batch_size must be 1..1000");
  if (c.visibility_timeout < std::chrono::seconds(1)) problems.push_back("visibility_timeout must be at least 1 second");
  if (c.poll_interval < std::chrono::milliseconds(10)) problems.push_back("poll_interval must be at least 10 ms");
  if (c.heartbeat_interval < std::chrono::milliseconds(100)) problems.push_back("heartbeat_interval must be at least 100 ms");
  if (c.stall_recovery_interval.count() < 0) problems.push_back("stall_recovery_interval must not be negative");
  if (c.stop_grace_period.count() < 0) problems.push_back("stop_grace_period must not be negative");
  if (c.startup_timeout.count() < 0) problems.push_back("startup_timeout must not be negative");
  if (c.report_batch_size < 1) problems.push_back("report_batch_size must be at least 1");
  if (!c.log_sink) c.log_sink = stderr_log_sink();
  if (!problems.empty()) {
    return absl::InvalidArgumentError("invalid WorkerConfig: " + absl::StrJoin(problems, "; "));
  }
  return absl::OkStatus();
}

// Why a task's stop token fired first, or that its handler returned before any stop. Set once,
// by compare-and-swap, so a deadline that passes as the handler returns, or after a worker
// stop, is not mistaken for the reason the handler stopped.
enum class StopCause { kNone, kWorkerStop, kUnwanted, kDeadline, kReturned };

// A task a handler is running: its stop source (fired when the worker stops, when the database
// says the task is no longer wanted, or at its deadline) and what fired it.
struct RunningTask {
  std::string run_id;
  std::string step_slug;
  int task_index = 0;
  int timeout_seconds = 60;
  Clock::time_point deadline;  // claim time + the step's timeout
  std::stop_source stop;
  // Set even after another cause: a task the database ended is never reported.
  std::atomic<bool> unwanted{false};
  std::atomic<StopCause> cause{StopCause::kNone};

  // Records `why` unless a cause is already set; true if it was recorded.
  bool set_cause(StopCause why) {
    StopCause none = StopCause::kNone;
    return cause.compare_exchange_strong(none, why);
  }
};

// A task the claim handed to this worker.
struct ClaimedTask {
  const StepDefinition* step = nullptr;
  std::string run_id;
  int task_index = 0;
  int attempt = 1;
  std::string message_id;  // decimal text
  nlohmann::json input;
  std::optional<nlohmann::json> flow_input;
  int timeout_seconds = 60;
  std::chrono::system_clock::time_point deadline;  // Context::deadline(): claim time + timeout
  // Registered as running when claimed (before a handler thread takes it), so that a stop
  // announced meanwhile reaches it.
  std::shared_ptr<RunningTask> running;
  std::uint64_t running_id = 0;
};

// A failed attempt's message: the status's, or its code's name when it has none.
std::string error_text(const absl::Status& status) {
  if (!status.message().empty()) return std::string(status.message());
  return absl::StatusCodeToString(status.code());
}

// How an attempt fails when its handler fails after its deadline fired: the handler's own
// error is usually a consequence ("cancelled"), so the timeout leads and the error follows.
absl::Status deadline_exceeded(std::string_view step_slug, int timeout_seconds,
                               const absl::Status& handler) {
  return absl::DeadlineExceededError(absl::StrCat("step '", internal::av(step_slug),
                                                  "' exceeded its timeout of ", timeout_seconds,
                                                  " s (handler: ", error_text(handler), ")"));
}

std::optional<nlohmann::json> parse_json(std::string_view text) {
  nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded()) return std::nullopt;
  return j;
}

}  // namespace

// ---------------------------------------------------------------------------------------------

class EdgeWorker::Impl {
 public:
  // `routes`: the flow's route (routes_of); the worker's queue is its step's, or the flow's.
  Impl(FlowDefinition flow, WorkerConfig config, std::vector<StepRoute> routes)
      : flow_(std::move(flow)),
        config_(std::move(config)),
        worker_id_(internal::random_uuid()),
        routes_(std::move(routes)),
        queue_(queue_of(flow_, config_.step, routes_)),
        log_(config_.log_sink, config_.log_level, log_fields()) {}

  ~Impl() {
    if (supervisor_.joinable()) {  // started
      request_stop(absl::OkStatus());
      (void)wait();
      supervisor_ = {};
    }
    // Joins the handler threads: handlers must return once their stop token fires.
    executor_.reset();
  }

  absl::Status start();
  void request_stop(absl::Status reason) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status wait() ABSL_LOCKS_EXCLUDED(mu_);
  bool running() const { return !stopped_.load(); }
  const std::string& worker_id() const { return worker_id_; }

 private:
  static std::string queue_of(const FlowDefinition& flow, const std::string& step,
                              const std::vector<StepRoute>& routes) {
    for (const StepRoute& route : routes) {
      if (route.step_slug == step) return route.queue_name;
    }
    return internal::ascii_lower(flow.slug);  // queue mode flow (also a flow without steps)
  }
  std::vector<LogField> log_fields() const {
    std::vector<LogField> fields = {{"worker_id", worker_id_}, {"flow", flow_.slug}};
    if (!config_.step.empty()) fields.push_back({"step", config_.step});
    fields.push_back({"queue", queue_});
    return fields;
  }
  // The step of a step worker as a query parameter: NULL for a flow worker.
  pg::Param step_param() const { return config_.step.empty() ? pg::Param() : pg::Param(config_.step); }
  Session session(std::string_view role,
                  std::function<absl::Status(pg::Connection&)> on_connect = {}) const {
    return Session(config_.connection_string, absl::StrCat("pgflow-worker-", internal::av(role)), log_,
                   std::move(on_connect));
  }
  void metric(WorkerMetric::Kind kind, std::string_view step, double value) const {
    if (config_.metrics) config_.metrics(WorkerMetric{kind, step, value});
  }

  // `attempt` counts from 1; a later attempt tolerates its own registration from an earlier
  // one whose reply was lost.
  absl::Status handshake_compile_register(int attempt);
  void poll_loop(std::stop_token stop) ABSL_LOCKS_EXCLUDED(mu_);
  absl::Status claim_batch(pg::Connection& conn, int slots, bool& queue_may_have_more)
      ABSL_LOCKS_EXCLUDED(mu_, running_mu_);
  void execute(ClaimedTask task);
  void heartbeat_loop(std::stop_token stop);
  void recover_stalled_tasks(Session& db, std::stop_token stop, std::optional<Clock::time_point>& skipped_since);
  // Waits on the heartbeat connection until `until`, stopping running tasks the database
  // announces as no longer wanted meanwhile; false when the worker is stopping.
  bool wait_for_stop_announcements(Session& db, Clock::time_point until, const std::stop_token& stop);
  void stop_unwanted_tasks(pg::Connection& conn) ABSL_LOCKS_EXCLUDED(running_mu_);
  // A handler call is over: frees its slot and drops its deadline.
  void finish_task(const ClaimedTask& task) ABSL_LOCKS_EXCLUDED(mu_);
  // Its task is no longer stoppable by the database.
  void forget_running(std::uint64_t id) ABSL_LOCKS_EXCLUDED(running_mu_);
  // Until the worker stops: fires the stop token of each task whose deadline passed.
  void watch_deadlines() ABSL_LOCKS_EXCLUDED(mu_);
  void supervise() ABSL_LOCKS_EXCLUDED(mu_);

  FlowDefinition flow_;
  WorkerConfig config_;
  std::string worker_id_;
  std::vector<StepRoute> routes_;
  std::string queue_;
  Logger log_;

  std::stop_source stop_;        // stop polling; signals handlers' stop tokens (under mu_)
  std::stop_source give_up_;     // stop retrying to report (grace period over)
  std::stop_source heartbeat_stop_;

  // mu_ guards in_flight_, deadlines_ and the stop reason; stop_ is requested and stopped_ set
  // under it too, so the poller, the supervisor and wait() Await conditions on them without a
  // stop_callback (absl re-evaluates the conditions whenever mu_ is unlocked). Never held during
  // a database call.
  absl::Mutex mu_;
  int in_flight_ ABSL_GUARDED_BY(mu_) = 0;  // tasks claimed and not yet finished by a handler
  absl::CondVar slot_freed_;                 // signalled when in_flight_ drops or stop_ is requested
  absl::Status stop_reason_ ABSL_GUARDED_BY(mu_);
  bool stop_reason_set_ ABSL_GUARDED_BY(mu_) = false;
  std::atomic<bool> stopped_{false};  // written under mu_ (for wait()), read without it
  // The deadlines of claimed tasks, by (deadline, running id): added and removed with
  // in_flight_ (no extra locking), so the supervisor's Await wakes for an earlier one.
  std::map<std::pair<Clock::time_point, std::uint64_t>, std::shared_ptr<RunningTask>> deadlines_
      ABSL_GUARDED_BY(mu_);

  // The tasks claimed for or run by handlers, by a sequence number (a task claimed again by
  // this worker after its timeout runs twice).
  absl::Mutex running_mu_;  // running_ and next_running_id_; never held during a database call
  std::map<std::uint64_t, std::shared_ptr<RunningTask>> running_ ABSL_GUARDED_BY(running_mu_);
  std::uint64_t next_running_id_ ABSL_GUARDED_BY(running_mu_) = 0;

  std::unique_ptr<internal::FlowInputCache> inputs_;
  std::unique_ptr<internal::Reporter> reporter_;
  std::unique_ptr<internal::Executor> executor_;
  std::jthread poller_, reporter_thread_, heartbeat_, supervisor_;
};

absl::Status EdgeWorker::Impl::start() {
  PGFLOW_RETURN_IF_ERROR(pg::retry_while_unreachable(
      config_.startup_timeout, "startup_timeout", [this](int attempt) { return handshake_compile_register(attempt); },
      [this](const absl::Status& error, int attempt, std::chrono::milliseconds delay) {
        log_.warn("database unreachable at startup; retrying",
                  {{"attempt", std::to_string(attempt)}, {"retry_in_ms", std::to_string(delay.count())},
                   {"error", std::string(error.message())}});
      }));
  inputs_ = std::make_unique<internal::FlowInputCache>(session("inputs"), 1024);
  reporter_ = std::make_unique<internal::Reporter>(session("reporter"), log_,
                                                   config_.report_batch_size, config_.metrics);
  executor_ = std::make_unique<internal::Executor>(config_.max_concurrent);
  reporter_thread_ = std::jthread([this] { reporter_->run(give_up_.get_token()); });
  heartbeat_ = std::jthread([this] { heartbeat_loop(heartbeat_stop_.get_token()); });
  poller_ = std::jthread([this] { poll_loop(stop_.get_token()); });
  supervisor_ = std::jthread([this] { supervise(); });
  return absl::OkStatus();
}

// Handshake, compile-or-verify, register: in this order, and nothing is registered unless the
// first two succeed. Each step is safe to repeat (start retries it while the database is
// unreachable).
absl::Status EdgeWorker::Impl::handshake_compile_register(int attempt) {
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn,
                          pg::Connection::open(config_.connection_string, "pgflow-worker-startup"));

  absl::StatusOr<pg::Result> protocol = conn.exec("select pgflow.worker_protocol()");
  if (!protocol.ok()) {
    if (sql_state(protocol.status()) == "42883" || sql_state(protocol.status()) == "3F000") {
      return absl::FailedPreconditionError(
          "pgflow: the database has no worker protocol (its pgflow schema is older than version "
          "0002, queue identity, or missing): run `pgflow migrate` before starting this worker");
    }
    return protocol.status();
  }
  PGFLOW_ASSIGN_OR_RETURN(std::int64_t db_protocol, protocol->int64(0, 0));
  if (db_protocol != kWorkerProtocol) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pgflow: the database speaks worker protocol ", db_protocol, " and this worker speaks ",
        kWorkerProtocol, ": ",
        db_protocol < kWorkerProtocol ? "upgrade the database with `pgflow migrate`"
                                      : "upgrade this worker's pgflow library"));
  }

  // The deployment: shape, queue mode and the route this library derived (the database
  // derives the same and refuses a worker whose route differs).
  nlohmann::json route_map = nlohmann::json::array();
  for (const StepRoute& route : routes_) {
    route_map.push_back({{"stepSlug", route.step_slug}, {"queueName", route.queue_name}});
  }
  const std::string queue_mode(to_string(flow_.queue_mode));
  // One transaction, under the alias lock then the flow's: membership, compilation, activation
  // of an alias without an active version (seed 004); committed before registration.
  PGFLOW_ASSIGN_OR_RETURN(
      pg::Result compiled,
      conn.exec("select pgflow.ensure_flow_compiled($1, $2::jsonb, $3::int, $4, $5::jsonb, $6)::text",
                {flow_.slug, shape_of(flow_).dump(), std::to_string(kWorkerProtocol), queue_mode,
                 route_map.dump(), alias_of(flow_)}));
  std::optional<nlohmann::json> outcome = parse_json(compiled.scalar());
  if (!outcome) return absl::InternalError("ensure_flow_compiled returned unparsable JSON");
  const std::string status = outcome->value("status", "");
  std::vector<std::string> differences;
  for (const auto& d : outcome->value("differences", nlohmann::json::array())) {
    differences.push_back(d.get<std::string>());
  }
  const nlohmann::json kind = outcome->value("mismatchKind", nlohmann::json());
  if (status == "mismatch") {
    return absl::FailedPreconditionError(absl::StrCat(
        "pgflow: flow \"", flow_.slug, "\" in the database differs from this worker's ",
        kind == "routing" ? "queue mode or route" : "definition",
        " (deploy the change as a new flow slug, e.g. a new version of the same alias: "
        "docs/deploying.md):\n  ",
        absl::StrJoin(differences, "\n  ")));
  }

  absl::StatusOr<pg::Result> registered =
      conn.exec("select worker_id from pgflow.register_worker($1::uuid, $2, $3, $4, $5::int)",
                {worker_id_, config_.function_name, flow_.slug, queue_, std::to_string(kWorkerProtocol)});
  if (!registered.ok() && attempt > 1 && sql_state(registered.status()) == "23505") {
    // An earlier attempt registered this worker and lost the reply: that registration stands.
    PGFLOW_ASSIGN_OR_RETURN(pg::Result mine, conn.exec("select count(*) from pgflow.workers where worker_id = $1::uuid "
                                                       "and function_name = $2",
                                                       {worker_id_, config_.function_name}));
    if (mine.scalar() == "1") registered = std::move(mine);
  }
  if (!registered.ok()) return registered.status();

  std::vector<std::string> route;
  for (const StepRoute& r : routes_) route.push_back(absl::StrCat(r.step_slug, ":", r.queue_name));
  log_.info("worker started",
            {{"function", config_.function_name},
             {"protocol", std::to_string(kWorkerProtocol)},
             {"compilation", status},
             {"activation", outcome->value("activation", "")},
             {"alias", outcome->value("flow_alias", "")},
             {"active_flow", outcome->value("active_flow_slug", nlohmann::json()).is_string()
                                 ? outcome->value("active_flow_slug", "")
                                 : std::string("none")},
             {"queue_mode", queue_mode},
             {"route", absl::StrJoin(route, ",")},
             {"max_concurrent", std::to_string(config_.max_concurrent)},
             {"connections", "4"}});
  if (status == "recompiled") {
    log_.warn("local database: the flow was recompiled and its previous runs deleted",
              {{"differences", absl::StrJoin(differences, "; ")}});
  }
  return absl::OkStatus();
}

void EdgeWorker::Impl::request_stop(absl::Status reason) {
  // Under mu_, so a thread awaiting a condition on stop_ cannot miss the wake-up.
  absl::MutexLock lock(&mu_);
  if (!stop_reason_set_) {
    stop_reason_ = std::move(reason);
    stop_reason_set_ = true;
  }
  stop_.request_stop();
  slot_freed_.SignalAll();
}

absl::Status EdgeWorker::Impl::wait() {
  auto stopped = [this] { return stopped_.load(); };
  absl::MutexLock lock(&mu_, absl::Condition(&stopped));
  return stop_reason_;
}

// ---- polling ----

void EdgeWorker::Impl::poll_loop(std::stop_token stop) {
  const std::string channel = "pgflow_queue:" + queue_;
  Session poll = session("poller", [&](pg::Connection& c) { return c.listen(channel); });
  internal::Backoff backoff;
  while (!stop.stop_requested()) {
    int slots;
    {
      // Waits for a free slot or a stop (`stop` is stop_'s, requested under mu_ with a signal).
      // A condition variable, not an Await: its wake-up lets several handlers finish before the
      // next claim, so claims stay large (an Await wakes at the first free slot: ~5 tasks per
      // claim instead of ~9 on a backlog, and ~40% more database CPU per task).
      absl::MutexLock lock(&mu_);
      while (in_flight_ >= config_.max_concurrent && !stop.stop_requested()) slot_freed_.Wait(&mu_);
      if (stop.stop_requested()) break;
      slots = std::min(config_.batch_size, config_.max_concurrent - in_flight_);
    }
    bool queue_may_have_more = false;
    absl::Status s = poll.retry(stop, "claim tasks", [&](pg::Connection& c) {
      return claim_batch(c, slots, queue_may_have_more);
    });
    if (stop.stop_requested()) break;
    if (!s.ok()) {
      // Not transient (e.g. the worker row was removed): log, back off, try again.
      log_.error("claiming failed", {{"error", std::string(s.message())},
                                     {"sqlstate", sql_state(s).value_or("")}});
      internal::sleep_unless_stopped(backoff.next(), stop);
      continue;
    }
    backoff.reset();
    if (queue_may_have_more) continue;  // read again at once

    // The read drained the queue: sleep until new work is announced or the fallback poll
    // interval passes. (Reading again at once would find nothing, or the one task a producer
    // committed meanwhile, whose announcement wakes us anyway: under a stream of producers that
    // turned every claim into a claim of one or two tasks plus an empty one.)
    absl::StatusOr<pg::Connection*> conn = poll.connection();
    if (!conn.ok()) continue;  // the next claim retries the connection with backoff
    auto woke = (*conn)->wait_notification(Clock::now() + config_.poll_interval, stop);
    if (!woke.ok()) {
      poll.reset();
      continue;
    }
    // Coalesce a burst of announcements into one read.
    while (woke.ok() && woke->has_value()) woke = (*conn)->wait_notification(Clock::now(), stop);
  }
}

absl::Status EdgeWorker::Impl::claim_batch(pg::Connection& conn, int slots,
                                           bool& queue_may_have_more) {
  const auto started = Clock::now();
  PGFLOW_ASSIGN_OR_RETURN(
      pg::Result rows,
      conn.exec(kReadAndClaim, {queue_, flow_.slug, std::to_string(config_.visibility_timeout.count()),
                                std::to_string(slots), worker_id_, step_param()}));
  // Wall time first: the token then never fires before the deadline a handler can read.
  const auto claimed_at_wall = std::chrono::system_clock::now();  // for Context::deadline()
  const auto claimed_at = Clock::now();
  metric(WorkerMetric::Kind::kClaimLatency, {},
         std::chrono::duration<double, std::milli>(claimed_at - started).count());
  // The read returned every message it asked for (whatever their outcome): the queue may hold
  // more. Fewer means it had no more visible messages.
  queue_may_have_more = rows.rows() >= slots;

  std::vector<std::string> fatal;
  int claimed = 0;
  for (int i = 0; i < rows.rows(); ++i) {
    const std::string_view outcome = rows.text(i, 0);
    const std::string msg_id(rows.text(i, 1));
    if (outcome == "fatal") {
      fatal.push_back(absl::StrCat(msg_id, " (", internal::av(rows.text(i, 8)), ")"));
    } else if (outcome == "claimed") {
      ClaimedTask task;
      task.step = flow_.find(rows.text(i, 3));
      task.run_id = std::string(rows.text(i, 2));
      task.task_index = static_cast<int>(rows.int64(i, 4).value_or(0));
      task.attempt = static_cast<int>(rows.int64(i, 5).value_or(1));
      task.message_id = msg_id;
      task.input = parse_json(rows.text(i, 6)).value_or(nlohmann::json());
      if (!rows.is_null(i, 7)) task.flow_input = parse_json(rows.text(i, 7));
      task.timeout_seconds = static_cast<int>(rows.int64(i, 9).value_or(60));
      // The claim hid the message for the timeout (+ 2 s): the task's time runs from here.
      task.deadline = claimed_at_wall + std::chrono::seconds(task.timeout_seconds);
      task.running = std::make_shared<RunningTask>();
      task.running->run_id = task.run_id;
      task.running->step_slug = std::string(rows.text(i, 3));
      task.running->task_index = task.task_index;
      task.running->timeout_seconds = task.timeout_seconds;
      task.running->deadline = claimed_at + std::chrono::seconds(task.timeout_seconds);
      {
        absl::MutexLock lock(&running_mu_);
        task.running_id = next_running_id_++;
        running_.emplace(task.running_id, task.running);
      }
      ++claimed;
      {
        absl::MutexLock lock(&mu_);
        ++in_flight_;
        deadlines_.emplace(std::make_pair(task.running->deadline, task.running_id), task.running);
      }
      executor_->submit([this, t = std::move(task)]() mutable { execute(std::move(t)); });
    } else if (outcome == "archived") {
      // Finished tasks' messages are routine; anything else that got archived was not ours.
      const std::string_view reason = rows.text(i, 8);
      if (reason.find("foreign") != std::string_view::npos) {
        log_.warn("archived a message that is not pgflow work (applications must not send to "
                  "pgflow queues)", {{"msg_id", msg_id}});
      } else {
        log_.debug("archived the message of a finished task", {{"msg_id", msg_id}});
      }
    } else {
      log_.debug("message not claimed", {{"msg_id", msg_id}, {"outcome", std::string(outcome)},
                                         {"reason", std::string(rows.text(i, 8))}});
    }
  }
  if (claimed > 0) metric(WorkerMetric::Kind::kClaimed, {}, claimed);
  if (!fatal.empty()) {
    std::string message = absl::StrCat(
        "pgflow: fatal claim on queue \"", queue_, "\": unsupported message(s) ",
        absl::StrJoin(fatal, ", "), "; nothing was claimed or archived, the messages are visible "
        "again, and worker function \"", config_.function_name, "\" is paused. Fix the queue, "
        "then run: select pgflow.resume_worker_function('",
        absl::StrReplaceAll(config_.function_name, {{"'", "''"}}), "');");
    log_.error(message);
    request_stop(absl::FailedPreconditionError(message));
  }
  return absl::OkStatus();
}

// ---- handlers ----

void EdgeWorker::Impl::execute(ClaimedTask task) {
  internal::TaskResult result;
  result.run_id = task.run_id;
  result.task_index = task.task_index;
  result.message_id = task.message_id;
  if (task.step == nullptr) {
    // claim_tasks only hands out tasks of this flow, whose steps were verified at startup.
    forget_running(task.running_id);
    task.running->set_cause(StopCause::kReturned);
    result.step_slug = "?";
    result.error_message = "pgflow: this worker has no handler for the claimed step";
  } else {
    result.step_slug = task.step->slug;
    Logger task_log = log_.with({{"run_id", task.run_id}, {"step", task.step->slug},
                                 {"task_index", std::to_string(task.task_index)},
                                 {"msg_id", task.message_id}});
    if (task.flow_input) inputs_->put(task.run_id, *task.flow_input);
    const std::shared_ptr<RunningTask>& running = task.running;
    // Worker stop still stops every handler.
    std::stop_callback stop_with_worker(stop_.get_token(), [&running] {
      running->set_cause(StopCause::kWorkerStop);
      running->stop.request_stop();
    });
    Context ctx(Context::Init{
        .flow_slug = flow_.slug,
        .run_id = task.run_id,
        .step_slug = task.step->slug,
        .task_index = task.task_index,
        .attempt = task.attempt,
        .message_id = task.message_id,
        .flow_input = task.flow_input,
        .flow_input_provider =
            [this, run_id = task.run_id] { return inputs_->get(run_id, stop_.get_token()); },
        .stop_token = running->stop.get_token(),
        .deadline = task.deadline,
        .logger = task_log,
    });
    task_log.debug("task started", {{"attempt", std::to_string(task.attempt)}});
    const auto started = Clock::now();
    absl::StatusOr<nlohmann::json> output = absl::UnknownError("handler did not return");
    try {
      output = task.step->handler(task.input, ctx);  // typed handlers never throw; hand-built may
    } catch (const std::exception& e) {
      output = absl::InternalError(e.what());
    } catch (...) {
      output = absl::InternalError("the handler threw a non-standard exception");
    }
    const double millis = std::chrono::duration<double, std::milli>(Clock::now() - started).count();
    metric(WorkerMetric::Kind::kHandlerTime, task.step->slug, millis);
    // The deadline counts only if it fired before the handler returned (and before any other
    // stop); setting kReturned also keeps it from firing now.
    const bool timed_out =
        !running->set_cause(StopCause::kReturned) && running->cause.load() == StopCause::kDeadline;
    forget_running(task.running_id);
    if (running->unwanted.load()) {
      // The database already ended the task (its run was cancelled or failed, its step
      // skipped): whatever the handler returned changes nothing, so it is not reported.
      task_log.debug("task no longer wanted: result dropped",
                     {{"duration_ms", std::to_string(static_cast<long>(millis))}});
      metric(WorkerMetric::Kind::kDropped, task.step->slug, 1);
      finish_task(task);
      return;
    }
    // A handler that failed after its deadline fired fails the attempt as a deadline exceeded;
    // one that still produced its output completes the task as before.
    if (timed_out && !output.ok()) {
      output = deadline_exceeded(task.step->slug, task.timeout_seconds, output.status());
    }
    if (output.ok()) {
      result.ok = true;
      result.output = std::move(*output);
      task_log.debug("task succeeded", {{"duration_ms", std::to_string(static_cast<long>(millis))}});
    } else {
      result.error_message = error_text(output.status());
      task_log.debug("task failed", {{"duration_ms", std::to_string(static_cast<long>(millis))},
                                     {"error", result.error_message}});
    }
  }
  reporter_->submit(std::move(result));
  finish_task(task);
}

void EdgeWorker::Impl::forget_running(std::uint64_t id) {
  absl::MutexLock lock(&running_mu_);
  running_.erase(id);
}

void EdgeWorker::Impl::finish_task(const ClaimedTask& task) {
  {
    absl::MutexLock lock(&mu_);  // unlocking wakes the supervisor (Await)
    --in_flight_;
    deadlines_.erase(std::make_pair(task.running->deadline, task.running_id));
  }
  slot_freed_.SignalAll();  // and the poller
}

// ---- tasks the database no longer wants ----

bool EdgeWorker::Impl::wait_for_stop_announcements(Session& db, Clock::time_point until,
                                                   const std::stop_token& stop) {
  while (!stop.stop_requested() && Clock::now() < until) {
    absl::StatusOr<pg::Connection*> conn = db.connection();
    if (!conn.ok()) {
      // Unreachable database: wait as before; the heartbeat's retry loop logs the outage.
      return internal::sleep_unless_stopped(
          std::chrono::duration_cast<std::chrono::milliseconds>(until - Clock::now()), stop);
    }
    auto announced = (*conn)->wait_notification(until, stop);
    if (!announced.ok()) {
      db.reset();
      continue;
    }
    if (!announced->has_value()) break;  // deadline or stop
    // One check for a burst of announcements.
    while (announced.ok() && announced->has_value()) announced = (*conn)->wait_notification(Clock::now(), stop);
    stop_unwanted_tasks(**conn);
  }
  return !stop.stop_requested();
}

void EdgeWorker::Impl::stop_unwanted_tasks(pg::Connection& conn) {
  nlohmann::json tasks = nlohmann::json::array();
  std::map<std::uint64_t, std::shared_ptr<RunningTask>> running;
  {
    absl::MutexLock lock(&running_mu_);
    running = running_;
  }
  for (const auto& [id, task] : running) {
    tasks.push_back({{"id", id}, {"run_id", task->run_id}, {"step_slug", task->step_slug},
                     {"task_index", task->task_index}});
  }
  if (tasks.empty()) return;
  absl::StatusOr<pg::Result> unwanted = conn.exec(kUnwantedTasks, {tasks.dump(), worker_id_});
  if (!unwanted.ok()) {
    // The next announcement checks again; worker stop and the task deadline still apply.
    log_.warn("could not check which running tasks are still wanted",
              {{"error", std::string(unwanted.status().message())}});
    return;
  }
  for (int i = 0; i < unwanted->rows(); ++i) {
    auto it = running.find(static_cast<std::uint64_t>(unwanted->int64(i, 0).value_or(-1)));
    if (it == running.end()) continue;
    it->second->unwanted.store(true);
    it->second->set_cause(StopCause::kUnwanted);
    it->second->stop.request_stop();
    log_.debug("task no longer wanted: stop requested",
               {{"run_id", it->second->run_id}, {"step", it->second->step_slug},
                {"task_index", std::to_string(it->second->task_index)}});
  }
}

// ---- heartbeats and stall recovery ----

void EdgeWorker::Impl::heartbeat_loop(std::stop_token stop) {
  // Also hears which running tasks the database stopped (cancelled runs, skipped steps).
  const std::string stop_channel = "pgflow_stop:" + queue_;
  // On every (re)connect: LISTEN, then one check, for announcements missed while disconnected.
  Session db = session("heartbeat", [&](pg::Connection& c) {
    PGFLOW_RETURN_IF_ERROR(c.listen(stop_channel));
    stop_unwanted_tasks(c);
    return absl::OkStatus();
  });
  auto next_beat = Clock::now() + config_.heartbeat_interval;
  const bool recovery = config_.stall_recovery_interval.count() > 0;
  // A random first offset spreads recovery attempts of workers started together.
  auto next_recovery =
      Clock::now() + internal::random_duration(std::chrono::milliseconds(0), config_.stall_recovery_interval);
  std::optional<Clock::time_point> skipped_since;  // recovery passes skipped since then
  while (!stop.stop_requested()) {
    auto wake = recovery ? std::min(next_beat, next_recovery) : next_beat;
    if (!wait_for_stop_announcements(db, wake, stop)) break;
    if (Clock::now() >= next_beat) {
      next_beat += config_.heartbeat_interval;
      absl::StatusOr<bool> deprecated = db.retry<bool>(
          stop, "heartbeat", [&](pg::Connection& c) -> absl::StatusOr<bool> {
            PGFLOW_ASSIGN_OR_RETURN(pg::Result r, c.exec("select pgflow.worker_heartbeat($1::uuid)",
                                                         {worker_id_}));
            return r.rows() > 0 && r.scalar() == "t";
          });
      if (deprecated.ok() && *deprecated && !stop_.stop_requested()) {
        log_.info("worker deprecated by an operator: no new claims, draining");
        request_stop(absl::OkStatus());
      }
    }
    if (recovery && Clock::now() >= next_recovery) {
      next_recovery += config_.stall_recovery_interval;
      recover_stalled_tasks(db, stop, skipped_since);
    }
  }
  // Last act: tell the database this worker is gone.
  std::stop_source bounded;
  std::jthread timer([&bounded](std::stop_token t) {
    if (internal::sleep_unless_stopped(std::chrono::seconds(5), t)) bounded.request_stop();
  });
  absl::Status marked = db.retry(bounded.get_token(), "mark worker stopped", [&](pg::Connection& c) {
    return c.exec("select pgflow.mark_worker_stopped($1::uuid)", {worker_id_}).status();
  });
  if (!marked.ok()) log_.warn("could not mark the worker stopped", {{"error", std::string(marked.message())}});
}

// One stall recovery pass; one worker at a time across the cluster: NULL when another session
// holds pgflow's stall recovery lock. Skipped for longer than a few intervals means a session
// holds that lock for a long time (recovery is off for every worker): warn once, naming it.
void EdgeWorker::Impl::recover_stalled_tasks(Session& db, std::stop_token stop,
                                             std::optional<Clock::time_point>& skipped_since) {
  absl::StatusOr<pg::Result> r = db.retry<pg::Result>(stop, "stall recovery", [](pg::Connection& c) {
    return c.exec(kRecoverStalledTasks);
  });
  if (!r.ok()) {
    if (r.status().code() != absl::StatusCode::kCancelled) {
      log_.error("stall recovery failed", {{"error", std::string(r.status().message())}});
    }
    return;
  }
  if (!r->is_null(0, 0)) {
    skipped_since.reset();
    if (r->scalar() != "0") log_.info("stall recovery requeued tasks", {{"count", std::string(r->scalar())}});
    return;
  }
  const Clock::time_point now = Clock::now();
  if (!skipped_since) {
    skipped_since = now;
    return;
  }
  const auto skipped = now - *skipped_since;
  if (skipped < kStallRecoveryWarnAfter * config_.stall_recovery_interval) return;
  const auto skipped_ms = std::chrono::duration_cast<std::chrono::milliseconds>(skipped).count();
  absl::StatusOr<pg::Result> holders = db.retry<pg::Result>(stop, "stall recovery lock holders", [&](pg::Connection& c) {
    return c.exec(kStallRecoveryHolders, {absl::StrCat(skipped_ms, " milliseconds")});
  });
  log_.warn("stall recovery has been skipped: another session holds pgflow's stall recovery lock, so no "
            "worker recovers stalled tasks",
            {{"skipped_s", std::to_string(skipped_ms / 1000)},
             {"held_by", holders.ok() && holders->rows() > 0 ? std::string(holders->scalar())
                                                              : std::string("unknown")}});
  skipped_since = now;  // once per kStallRecoveryWarnAfter intervals while it lasts
}

// ---- task deadlines ----

// Runs on the supervisor thread, which has nothing else to do until the worker stops: one
// timer for every task, woken for the earliest deadline, and no database call in its way.
void EdgeWorker::Impl::watch_deadlines() {
  std::vector<std::shared_ptr<RunningTask>> expired;
  while (true) {
    // Outside mu_: request_stop() runs the handlers' stop callbacks on this thread.
    for (const std::shared_ptr<RunningTask>& task : expired) {
      if (!task->set_cause(StopCause::kDeadline)) continue;  // returned, or stopped otherwise
      task->stop.request_stop();
      log_.debug("task deadline passed: stop requested",
                 {{"run_id", task->run_id}, {"step", task->step_slug},
                  {"task_index", std::to_string(task->task_index)},
                  {"timeout_s", std::to_string(task->timeout_seconds)}});
    }
    expired.clear();

    absl::MutexLock lock(&mu_);
    const bool idle = deadlines_.empty();
    const Clock::time_point until = idle ? Clock::time_point::max() : deadlines_.begin()->first.first;
    // A stop, or a claim with an earlier deadline than the one awaited.
    auto woken = [this, &until]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
      return stop_.stop_requested() || (!deadlines_.empty() && deadlines_.begin()->first.first < until);
    };
    if (idle) {
      mu_.Await(absl::Condition(&woken));
    } else {
      mu_.AwaitWithTimeout(absl::Condition(&woken), absl::FromChrono(until - Clock::now()));
    }
    if (stop_.stop_requested()) return;  // the worker stop fires every token
    const Clock::time_point now = Clock::now();
    while (!deadlines_.empty() && deadlines_.begin()->first.first <= now) {
      expired.push_back(std::move(deadlines_.begin()->second));
      deadlines_.erase(deadlines_.begin());
    }
  }
}

// ---- stopping ----

void EdgeWorker::Impl::supervise() {
  watch_deadlines();  // until stop_ is requested
  poller_ = {};  // joins: no new claims from here on
  const auto grace_end = Clock::now() + config_.stop_grace_period;
  {
    auto drained = [this]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) { return in_flight_ == 0; };
    absl::MutexLock lock(&mu_);
    if (in_flight_ > 0) log_.info("stopping: waiting for in-flight handlers", {{"count", std::to_string(in_flight_)}});
    const absl::Duration grace_left = absl::FromChrono(grace_end - Clock::now());
    if (!mu_.AwaitWithTimeout(absl::Condition(&drained), grace_left)) {
      log_.warn("stop grace period over; still waiting for handlers to return",
                {{"count", std::to_string(in_flight_)}});
      mu_.Await(absl::Condition(&drained));
    }
  }
  inputs_->close();  // no handler runs any more
  // Every result is queued now: report them, within the grace period if the database is down.
  reporter_->finish();
  std::jthread grace_timer([this, grace_end](std::stop_token t) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(grace_end - Clock::now());
    if (internal::sleep_unless_stopped(std::max(left, std::chrono::milliseconds(1000)), t)) {
      give_up_.request_stop();
    }
  });
  reporter_thread_ = {};
  reporter_->close();
  grace_timer = {};
  heartbeat_stop_.request_stop();
  heartbeat_ = {};  // marks the worker stopped
  log_.info("worker stopped");
  // Under mu_, so a wait() awaiting stopped_ cannot miss the wake-up.
  absl::MutexLock lock(&mu_);
  stopped_.store(true);
}

// ---------------------------------------------------------------------------------------------

EdgeWorker::EdgeWorker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EdgeWorker::EdgeWorker(EdgeWorker&&) noexcept = default;
EdgeWorker& EdgeWorker::operator=(EdgeWorker&&) noexcept = default;
EdgeWorker::~EdgeWorker() = default;

absl::Status EdgeWorker::select_step(WorkerConfig& config, std::string_view step) {
  if (!config.step.empty() && config.step != step) {
    return absl::InvalidArgumentError(absl::StrCat("invalid WorkerConfig: step is \"", config.step,
                                                   "\" but only_step selects \"", internal::av(step), "\""));
  }
  config.step = std::string(step);
  return absl::OkStatus();
}

absl::StatusOr<EdgeWorker> EdgeWorker::start(const FlowDefinition& flow, WorkerConfig config) {
  // A worker that does not start says why in its log too: a deployment's main() may only
  // return the status.
  const Logger log(config.log_sink ? config.log_sink : stderr_log_sink(), config.log_level, {{"flow", flow.slug}});
  absl::StatusOr<EdgeWorker> worker = [&]() -> absl::StatusOr<EdgeWorker> {
    // Everything that can be checked without the database, before touching it.
    PGFLOW_RETURN_IF_ERROR(validate(config, flow));
    PGFLOW_RETURN_IF_ERROR(validate(flow));
    PGFLOW_ASSIGN_OR_RETURN(std::vector<StepRoute> routes, routes_of(flow));
    auto impl = std::make_unique<Impl>(flow, std::move(config), std::move(routes));
    PGFLOW_RETURN_IF_ERROR(impl->start());
    return EdgeWorker(std::move(impl));
  }();
  if (!worker.ok()) log.error("worker did not start", {{"error", std::string(worker.status().message())}});
  return worker;
}

void EdgeWorker::stop() { impl_->request_stop(absl::OkStatus()); }
absl::Status EdgeWorker::wait() { return impl_->wait(); }
bool EdgeWorker::running() const { return impl_->running(); }
const std::string& EdgeWorker::worker_id() const { return impl_->worker_id(); }

absl::Status EdgeWorker::run(const FlowDefinition& flow, WorkerConfig config) {
  // Block SIGINT/SIGTERM before any worker thread exists, so they all inherit the mask and
  // only sigtimedwait below receives the signals.
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  absl::Status result = [&]() -> absl::Status {
    PGFLOW_ASSIGN_OR_RETURN(EdgeWorker worker, start(flow, std::move(config)));
    const timespec tick{0, 200'000'000};  // also notice a worker that stopped by itself
    while (worker.running()) {
      siginfo_t info;
      if (sigtimedwait(&signals, &info, &tick) > 0) {
        worker.stop();
        break;
      }
    }
    return worker.wait();
  }();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return result;
}

}  // namespace pgflow
