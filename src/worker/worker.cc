#include "worker/worker.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "internal/random.h"
#include "internal/strings.h"
#include "pg/startup_retry.h"
#include "worker/config.h"
#include "worker/startup.h"

namespace pgflow::internal {
namespace {

// The queue a worker polls: its step's (a step-queued flow), else the flow's.
std::string queue_of(const FlowDefinition& flow, const std::string& step,
                     const std::vector<StepRoute>& routes) {
  for (const StepRoute& route : routes) {
    if (route.step_slug == step) return route.queue_name;
  }
  return ascii_lower(flow.slug);  // queue mode flow (also a flow without steps)
}

std::vector<LogField> log_fields(const WorkerConfig& config, const std::string& worker_id,
                                 const std::string& flow, const std::string& queue) {
  std::vector<LogField> fields = {{"worker_id", worker_id}, {"flow", flow}};
  if (!config.step.empty()) fields.push_back({"step", config.step});
  fields.push_back({"queue", queue});
  return fields;
}

}  // namespace

Worker::Worker(FlowDefinition flow, WorkerConfig config, std::vector<StepRoute> routes,
               StoreFactory stores, const Clock& clock)
    : flow_(std::move(flow)),
      config_(std::move(config)),
      routes_(std::move(routes)),
      worker_id_(random_uuid()),
      queue_(queue_of(flow_, config_.step, routes_)),
      log_(config_.log_sink, config_.log_level,
           log_fields(config_, worker_id_, flow_.slug, queue_)),
      stores_(std::move(stores)),
      clock_(clock),
      in_flight_(config_.max_concurrent) {}

Worker::~Worker() {
  if (supervisor_thread_.joinable()) {  // started
    request_stop(absl::OkStatus());
    (void)wait();
    supervisor_thread_ = {};
  }
  // Joins the handler threads: handlers must return once their stop token fires.
  executor_.reset();
}

absl::Status Worker::start() {
  {
    std::unique_ptr<Store> startup =
        stores_(StoreRole::kStartup, queue_, log_);  // closed when started
    const WorkerIdentity self{worker_id_, queue_};
    absl::Status started = pg::retry_while_unreachable(
        config_.startup_timeout, "startup_timeout",
        [&](int attempt) {
          return deploy_and_register(*startup, flow_, routes_, config_, self, log_, attempt);
        },
        [this](const absl::Status& error, int attempt, std::chrono::milliseconds delay) {
          log_.warn("database unreachable at startup; retrying",
                    {{"attempt", std::to_string(attempt)},
                     {"retry_in_ms", std::to_string(delay.count())},
                     {"error", std::string(error.message())}});
        });
    if (!started.ok()) return started;
  }
  auto metric = [this](WorkerMetric::Kind kind, std::string_view step, double value) {
    this->metric(kind, step, value);
  };
  inputs_ = std::make_unique<FlowInputCache>(stores_(StoreRole::kInputs, queue_, log_), 1024);
  reporter_ = std::make_unique<Reporter>(stores_(StoreRole::kReporter, queue_, log_), log_,
                                         config_.report_batch_size, config_.metrics);
  executor_ = std::make_unique<Executor>(config_.max_concurrent);
  runner_ = std::make_unique<TaskRunner>(flow_, in_flight_, *inputs_, clock_, log_, metric);
  poller_store_ = stores_(StoreRole::kPoller, queue_, log_);
  PollerConfig poller_config;
  poller_config.claim.queue = queue_;
  poller_config.claim.flow_slug = flow_.slug;
  poller_config.claim.step = config_.step;
  poller_config.claim.worker_id = worker_id_;
  poller_config.claim.visibility_timeout_s = static_cast<int>(config_.visibility_timeout.count());
  poller_config.batch_size = config_.batch_size;
  poller_config.function_name = config_.function_name;
  poller_config.poll_interval = idle_poll_interval(config_);
  poller_config.poll_only = config_.poll_only;
  poller_ = std::make_unique<Poller>(
      std::move(poller_config), flow_, *poller_store_, in_flight_, *runner_, *reporter_, *executor_,
      clock_, log_, metric, [this](absl::Status reason) { request_stop(std::move(reason)); });
  maintenance_store_ = stores_(StoreRole::kMaintenance, queue_, log_);
  maintenance_ = std::make_unique<Maintenance>(
      MaintenanceConfig{
          .registration = registration_of(flow_, config_, WorkerIdentity{worker_id_, queue_}),
          .heartbeat_interval = config_.heartbeat_interval,
          .stall_recovery_interval = config_.stall_recovery_interval,
          .stop_check_interval =
              config_.poll_only ? std::optional(stop_check_interval(config_)) : std::nullopt,
          .fire_wait_timers =
              std::any_of(flow_.steps.begin(), flow_.steps.end(),
                          [](const StepDefinition& s) { return s.wait.has_value(); })},
      *maintenance_store_, in_flight_, clock_, log_, [this] { request_drain(); });

  reporter_thread_ = std::jthread([this] { reporter_->run(give_up_.get_token()); });
  maintenance_thread_ = std::jthread([this] { maintenance_->run(maintenance_stop_.get_token()); });
  poller_thread_ = std::jthread([this] { poller_->run(stop_.get_token()); });
  supervisor_thread_ = std::jthread([this] { supervise(); });
  return absl::OkStatus();
}

void Worker::set_stop_reason(absl::Status reason) {
  absl::MutexLock lock(&mu_);
  if (!stop_reason_set_) {
    stop_reason_ = std::move(reason);
    stop_reason_set_ = true;
  }
}

void Worker::request_stop(absl::Status reason) {
  set_stop_reason(std::move(reason));
  // Outside mu_: stopping fires the handlers' stop tokens, whose callbacks are user code.
  stop_.request_stop();
  in_flight_.stop_all();
}

void Worker::request_drain() {
  set_stop_reason(absl::OkStatus());
  stop_.request_stop();
  in_flight_.stop_claims();
}

absl::Status Worker::wait() {
  auto stopped = [this] { return stopped_.load(); };
  absl::MutexLock lock(&mu_, absl::Condition(&stopped));
  return stop_reason_;
}

void Worker::metric(WorkerMetric::Kind kind, std::string_view step, double value) const {
  if (config_.metrics) config_.metrics(WorkerMetric{kind, step, value});
}

void Worker::supervise() {
  fire_deadlines_while([](const InFlight::NextDeadline& n) { return !n.claims_stopped; });
  if (!in_flight_.next_deadline().stopping) {
    // Draining (deprecated): the tasks held run to their end, their deadlines still fire, and a
    // stop may still come.
    poller_thread_ = {};
    in_flight_.no_more_tasks();
    fire_deadlines_while([](const InFlight::NextDeadline& n) { return !n.stopping && !n.drained; });
  }
  run_stop_sequence();
}

void Worker::fire_deadlines_while(bool (*go_on)(const InFlight::NextDeadline&)) {
  for (;;) {
    // Sleeps until the earliest deadline, or until an earlier one arrives or the state changes.
    const InFlight::NextDeadline next = in_flight_.next_deadline();
    if (!go_on(next)) return;
    clock_.sleep_until(next.at, next.earlier);
    for (const StoppedTask& t : in_flight_.fire_deadlines(clock_.now())) {
      log_.debug("task deadline passed: stop requested",
                 {{"run_id", t.task.run_id},
                  {"step", t.task.step_slug},
                  {"task_index", std::to_string(t.task.task_index)},
                  {"timeout_s", std::to_string(t.timeout_seconds)}});
    }
  }
}

void Worker::run_stop_sequence() {
  poller_thread_ = {};  // joins: no new claims from here on
  poller_store_->disconnect();
  // Only now: a claim whose reply arrived after the stop has added its tasks (they run, with
  // their stop token fired, and are reported like any other).
  in_flight_.no_more_tasks();
  const Clock::Time grace_end = clock_.now() + config_.stop_grace_period;
  if (const int count = in_flight_.count(); count > 0) {
    log_.info("stopping: waiting for in-flight handlers", {{"count", std::to_string(count)}});
  }
  if (clock_.sleep_until(grace_end, in_flight_.drained())) {  // the grace period ended first
    log_.warn("stop grace period over; still waiting for handlers to return",
              {{"count", std::to_string(in_flight_.count())}});
    clock_.sleep_until(Clock::Time::max(), in_flight_.drained());
  }
  inputs_->close();  // no handler runs any more
  // Every result is queued now: report them, within the grace period if the database is down.
  reporter_->finish();
  std::jthread grace_timer([this, grace_end](std::stop_token t) {
    if (clock_.sleep_until(std::max(grace_end, clock_.now() + std::chrono::seconds(1)), t))
      give_up_.request_stop();
  });
  reporter_thread_ = {};
  reporter_->close();
  grace_timer = {};
  maintenance_stop_.request_stop();
  maintenance_thread_ = {};          // marks the worker stopped
  maintenance_store_->disconnect();  // (the last of its connections: a handle kept holds none)
  log_.info("worker stopped");
  // Under mu_, so a wait() awaiting stopped_ cannot miss the wake-up.
  absl::MutexLock lock(&mu_);
  stopped_.store(true);
}

}  // namespace pgflow::internal
