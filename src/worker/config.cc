#include "worker/config.h"

#include <chrono>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/durations.h"
#include "pg/connection.h"

namespace pgflow::internal {
namespace {

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
    return absl::StrCat(
        "step is \"", c.step, "\", but flow \"", flow.slug,
        "\" has one queue for all its steps, so its workers serve every step; leave step "
        "empty, or give each step its own queue with pgflow::with_step_queues");
  }
  if (c.step.empty()) {
    return absl::StrCat(
        "flow \"", flow.slug, "\" has one queue per step and a worker serves one of them (",
        step_list(flow),
        "): start it with EdgeWorker::start(flow, pgflow::only_step<\"slug\">, ...) "
        "or set WorkerConfig::step; run one worker per step, in one process or several");
  }
  const StepDefinition* step = flow.find(c.step);
  if (step == nullptr) {
    return absl::StrCat("step \"", c.step, "\" is not a step of flow \"", flow.slug,
                        "\" (its steps: ", step_list(flow), ")");
  }
  if (step->wait) {
    return absl::StrCat("step \"", c.step, "\" of flow \"", flow.slug,
                        "\" is a wait step: the database completes it, no worker serves it");
  }
  return std::nullopt;
}

// Unset poll_interval: a worker looks every second, and a poll-only one backs off to two while
// idle but still checks its running tasks for stops every second.
constexpr std::chrono::milliseconds kDefaultPollInterval{1000}, kPollOnlyIdleInterval{2000};

}  // namespace

std::chrono::milliseconds idle_poll_interval(const WorkerConfig& config) {
  return config.poll_interval.value_or(config.poll_only ? kPollOnlyIdleInterval
                                                        : kDefaultPollInterval);
}

std::chrono::milliseconds stop_check_interval(const WorkerConfig& config) {
  return config.poll_interval.value_or(kDefaultPollInterval);
}

StoreConnections store_connections(const WorkerConfig& config) {
  return {.conninfo = config.connection_string,
          .listen_conninfo = config.listen_connection_string,
          .poll_only = config.poll_only,
          .max_connections = config.max_connections};
}

absl::Status complete_and_check(WorkerConfig& c, const FlowDefinition& flow) {
  std::vector<std::string> problems;
  if (std::optional<std::string> url = pg::connection_string_or_env(c.connection_string)) {
    c.connection_string = *std::move(url);
  } else {
    problems.push_back(pg::no_database("connection_string"));
  }
  if (c.poll_only && !c.listen_connection_string.empty()) {
    problems.push_back(
        "poll_only and listen_connection_string exclude each other: a worker either LISTENs "
        "(on listen_connection_string) or polls; set one of them");
  }
  if (c.max_connections < 1 || c.max_connections > 4) {
    problems.push_back("max_connections must be 1..4");
  } else if (c.max_connections < kRoleConnections &&
             store_connections(c).statement_connections_listen()) {
    problems.push_back(absl::StrCat(
        "max_connections ", c.max_connections,
        " shares connections between the worker's roles, but the poller and the heartbeat "
        "LISTEN on theirs (a connection that waits for notifications cannot be shared): set "
        "poll_only, or listen_connection_string, or max_connections = 4"));
  }
  if (std::optional<std::string> problem = step_problem(c, flow)) problems.push_back(*problem);
  if (c.function_name.size() > 256) {
    // (register_worker refuses it too: the name is a primary key, and a btree entry must fit.
    // The default below fits for any valid flow and step slug; validate() checks those.)
    problems.push_back(
        absl::StrCat("function_name must be at most 256 bytes, not ", c.function_name.size()));
  }
  if (c.function_name.empty()) {
    c.function_name = c.step.empty() ? absl::StrCat(flow.slug, "-worker")
                                     : absl::StrCat(flow.slug, "-", c.step, "-worker");
  }
  if (c.max_concurrent < 1 || c.max_concurrent > 1000)
    problems.push_back("max_concurrent must be 1..1000");
  if (c.batch_size < 1 || c.batch_size > 1000) problems.push_back("batch_size must be 1..1000");
  if (c.visibility_timeout < std::chrono::seconds(1))
    problems.push_back("visibility_timeout must be at least 1 second");
  if (c.visibility_timeout > std::chrono::seconds(std::numeric_limits<int>::max()))
    problems.push_back("visibility_timeout must be at most 2147483647 seconds (PGMQ's int)");
  if (c.poll_interval && *c.poll_interval < std::chrono::milliseconds(10))
    problems.push_back("poll_interval must be at least 10 ms");
  if (c.heartbeat_interval < std::chrono::milliseconds(100))
    problems.push_back("heartbeat_interval must be at least 100 ms");
  if (c.stall_recovery_interval.count() < 0)
    problems.push_back("stall_recovery_interval must not be negative");
  if (c.stop_grace_period.count() < 0) problems.push_back("stop_grace_period must not be negative");
  if (c.startup_timeout.count() < 0) problems.push_back("startup_timeout must not be negative");
  if (c.report_batch_size < 1) problems.push_back("report_batch_size must be at least 1");
  if (!c.log_sink) c.log_sink = stderr_log_sink();
  for (std::chrono::milliseconds* d : {&c.heartbeat_interval, &c.stall_recovery_interval,
                                       &c.stop_grace_period, &c.startup_timeout}) {
    *d = at_most_forever(*d);
  }
  if (c.poll_interval) *c.poll_interval = at_most_forever(*c.poll_interval);
  if (!problems.empty()) {
    return absl::InvalidArgumentError("invalid WorkerConfig: " + absl::StrJoin(problems, "; "));
  }
  return absl::OkStatus();
}

}  // namespace pgflow::internal
