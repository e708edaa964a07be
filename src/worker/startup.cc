#include "worker/startup.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/status_macros.h"
#include "nlohmann/json.hpp"
#include "pg/error.h"
#include "pgflow/status.h"

namespace pgflow::internal {
namespace {

absl::Status check_handshake(Store& store) {
  absl::StatusOr<Handshake> handshake = store.handshake();
  if (!handshake.ok()) {
    if (pg::is_missing_function(handshake.status()) || sql_state(handshake.status()) == "3F000") {
      return absl::FailedPreconditionError(
          "pgflow: the database has no worker protocol (its pgflow schema is older than version "
          "0002, queue identity, or missing): run `pgflow migrate` before starting this worker");
    }
    return handshake.status();
  }
  if (handshake->protocol != kWorkerProtocol) {
    return absl::FailedPreconditionError(absl::StrCat(
        "pgflow: the database speaks worker protocol ", handshake->protocol,
        " and this worker speaks ", kWorkerProtocol, ": ",
        handshake->protocol < kWorkerProtocol ? "upgrade the database with `pgflow migrate`"
                                              : "upgrade this worker's pgflow library"));
  }
  // Another level would break the worker quietly: a commit outside READ COMMITTED admits no
  // held task of a concurrency limit (its snapshot could over-admit), so limited flows would
  // wait forever, and concurrent results of one step would fail serialization checks.
  if (handshake->isolation == "read committed") return absl::OkStatus();
  return absl::FailedPreconditionError(absl::StrCat(
      "pgflow: this worker's transactions would run at ", handshake->isolation,
      " isolation (default_transaction_isolation: of its role or database, or set by the "
      "connection string's options or PGOPTIONS); pgflow's workers need read committed, "
      "PostgreSQL's default: ALTER ROLE <the worker's role> SET default_transaction_isolation = "
      "'read committed', or remove the option"));
}

}  // namespace

Registration registration_of(const FlowDefinition& flow, const WorkerConfig& config,
                             const WorkerIdentity& self) {
  return {.worker_id = self.worker_id,
          .function_name = config.function_name,
          .flow_slug = flow.slug,
          .queue = self.queue,
          .protocol = kWorkerProtocol};
}

absl::Status deploy_and_register(Store& store, const FlowDefinition& flow,
                                 const std::vector<StepRoute>& routes, const WorkerConfig& config,
                                 const WorkerIdentity& self, const Logger& log, int attempt) {
  PGFLOW_RETURN_IF_ERROR(check_handshake(store));

  // The deployment: shape, queue mode and the route this library derived (the database
  // derives the same and refuses a worker whose route differs).
  nlohmann::json route_map = nlohmann::json::array();
  std::vector<std::string> route;
  for (const StepRoute& r : routes) {
    route_map.push_back({{"stepSlug", r.step_slug}, {"queueName", r.queue_name}});
    route.push_back(absl::StrCat(r.step_slug, ":", r.queue_name));
  }
  const std::string queue_mode(to_string(flow.queue_mode));
  const nlohmann::ordered_json control = flow_control_of(flow);
  const std::string flow_control = control.empty() ? "" : control.dump();
  PGFLOW_ASSIGN_OR_RETURN(DeployOutcome deployed, store.deploy({.flow_slug = flow.slug,
                                                                .shape = shape_of(flow).dump(),
                                                                .queue_mode = queue_mode,
                                                                .route_map = route_map.dump(),
                                                                .flow_alias = alias_of(flow),
                                                                .flow_control = flow_control,
                                                                .protocol = kWorkerProtocol}));
  if (deployed.status == "mismatch") {
    return absl::FailedPreconditionError(
        absl::StrCat("pgflow: flow \"", flow.slug, "\" in the database differs from this worker's ",
                     deployed.mismatch_kind == "routing"       ? "queue mode or route"
                     : deployed.mismatch_kind == "flowControl" ? "concurrency limits"
                                                               : "definition",
                     " (deploy the change as a new flow slug, e.g. a new version of the same "
                     "alias: docs/deploying.md):\n  ",
                     absl::StrJoin(deployed.differences, "\n  ")));
  }

  PGFLOW_RETURN_IF_ERROR(
      store.register_worker(registration_of(flow, config, self), /*again=*/attempt > 1));

  log.info("worker started", {{"function", config.function_name},
                              {"protocol", std::to_string(kWorkerProtocol)},
                              {"compilation", deployed.status},
                              {"activation", deployed.activation},
                              {"alias", deployed.flow_alias},
                              {"active_flow", deployed.active_flow_slug.value_or("none")},
                              {"queue_mode", queue_mode},
                              {"route", absl::StrJoin(route, ",")},
                              {"flow_control", control.empty() ? "none" : flow_control},
                              {"max_concurrent", std::to_string(config.max_concurrent)},
                              {"connections", std::to_string(config.max_connections)}});
  if (deployed.status == "recompiled") {
    log.warn("local database: the flow was recompiled and its previous runs deleted",
             {{"differences", absl::StrJoin(deployed.differences, "; ")}});
  }
  return absl::OkStatus();
}

}  // namespace pgflow::internal
