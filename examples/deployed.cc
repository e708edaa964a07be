// Deployed flows: two versions of one flow behind the stable alias "greetUser", a rollout that
// switches the alias with compare-and-swap, a pinned start and a rollback. Run it with
// DATABASE_URL set (ctest runs it on a fresh database: db.examples.deployed).
//
//   1. V1 (one queue) deploys and, as the alias's first version, becomes active
//   2. V2 (one queue per step) deploys a worker per step and stays inactive
//   3. the operator checks that every V2 queue has a live worker, then activates V2
//   4. new runs of the alias run V2; V1 can still be started by its slug
//   5. a stale activation is refused; a rollback uses the same check
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/deployed_flow.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"

namespace {

std::string hello(const std::string& name) { return "Hello, " + name; }

// Version 1: one step.
inline const auto greet_v1 = pgflow::define_deployed_flow(
    pgflow::Flow<"greetUserV1", std::string>().step<"greet">(hello), {.alias = "greetUser"});

// Version 2: adds a step, and gives each step its own queue (one worker per step).
inline const auto greet_v2 = pgflow::define_deployed_flow(
    pgflow::with_step_queues(
        pgflow::Flow<"greetUserV2", std::string>().step<"greet">(hello).step<"decorate">(
            pgflow::after<"greet">,
            [](const std::string& greeting) { return "*** " + greeting + " ***"; })),
    {.alias = "greetUser"});

int fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "deployed: %s: %s\n", what, std::string(s.message()).c_str());
  return 1;
}

// Starts a run (by alias, or pinned to a version) and waits for it; prints what ran.
std::optional<pgflow::RunState> run(const pgflow::Client& client, const std::string& name,
                                    const char* how,
                                    const absl::StatusOr<pgflow::RunState>& started) {
  if (!started.ok()) {
    fail(how, started.status());
    return std::nullopt;
  }
  absl::StatusOr<pgflow::RunState> done =
      client.wait_for_run(started->run_id, std::chrono::seconds(60));
  if (!done.ok()) {
    fail("wait_for_run", done.status());
    return std::nullopt;
  }
  std::printf("%-22s %-8s -> %s (alias %s): %s\n", how, name.c_str(), done->flow_slug.c_str(),
              done->flow_alias.c_str(),
              done->output ? done->output->dump().c_str()
                           : std::string(pgflow::to_string(done->status)).c_str());
  return *done;
}

}  // namespace

int main() {
  // Every entry point reads DATABASE_URL when given no connection string.
  if (absl::Status s = pgflow::migrate(); !s.ok()) return fail("migrate", s);
  pgflow::WorkerConfig config{.max_concurrent = 2};
  config.log_level = pgflow::LogLevel::kWarn;
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();
  if (!client.ok()) return fail("connect", client.status());

  // 1. V1's worker deploys V1: the alias's first version becomes active.
  absl::StatusOr<pgflow::EdgeWorker> v1 = pgflow::EdgeWorker::start(greet_v1, config);
  if (!v1.ok()) return fail("start V1 worker", v1.status());
  if (!run(*client, "Ada", "start_flow", client->start_flow(greet_v1, "Ada"))) return 1;

  // 2. V2's workers, one per step, deploy V2; it stays inactive.
  absl::StatusOr<pgflow::EdgeWorker> v2_greet =
      pgflow::EdgeWorker::start(greet_v2, pgflow::only_step<"greet">, config);
  if (!v2_greet.ok()) return fail("start V2 greet worker", v2_greet.status());
  absl::StatusOr<pgflow::EdgeWorker> v2_decorate =
      pgflow::EdgeWorker::start(greet_v2, pgflow::only_step<"decorate">, config);
  if (!v2_decorate.ok()) return fail("start V2 decorate worker", v2_decorate.status());
  if (!run(*client, "Bo", "start_flow", client->start_flow("greetUser", "Bo"))) return 1;

  // 3. Coverage check (docs/deploying.md): every queue of V2 has a live worker.
  std::string uncovered;
  absl::Status checked = client->in_transaction([&](pgflow::Transaction& tx) -> absl::Status {
    absl::StatusOr<pgflow::Rows> rows = tx.exec(
        "select s.step_slug from pgflow.steps s where s.flow_slug = $1 and not exists ("
        "  select 1 from pgflow.workers w where w.queue_name = s.queue_name and w.stopped_at is "
        "null"
        "  and w.deprecated_at is null and w.last_heartbeat_at > now() - interval '30 seconds')",
        {"greetUserV2"});
    if (!rows.ok()) return rows.status();
    for (const auto& row : *rows) uncovered += row[0].value_or("") + " ";
    return absl::OkStatus();
  });
  if (!checked.ok()) return fail("coverage check", checked);
  if (!uncovered.empty()) {
    std::fprintf(stderr, "deployed: V2 steps without a worker: %s\n", uncovered.c_str());
    return 1;
  }
  std::printf("coverage: every step of greetUserV2 has a live worker\n");
  absl::StatusOr<pgflow::FlowAlias> switched =
      client->activate_flow_version("greetUser", "greetUserV2", "greetUserV1");
  if (!switched.ok()) return fail("activate V2", switched.status());
  std::printf("activated: greetUser -> %s\n", switched->active_flow_slug.value_or("?").c_str());

  // 4. The alias starts V2 now; V1 still runs when pinned by slug.
  std::optional<pgflow::RunState> by_alias =
      run(*client, "Cy", "start_flow", client->start_flow("greetUser", "Cy"));
  std::optional<pgflow::RunState> pinned =
      run(*client, "Di", "start_flow_by_slug", client->start_flow_by_slug(greet_v1, "Di"));
  if (!by_alias || by_alias->flow_slug != "greetUserV2" || !pinned ||
      pinned->flow_slug != "greetUserV1") {
    std::fprintf(stderr, "deployed: the alias or the pinned start ran the wrong version\n");
    return 1;
  }

  // 5. A stale expectation changes nothing; a rollback expects the current version.
  absl::StatusOr<pgflow::FlowAlias> stale =
      client->activate_flow_version("greetUser", "greetUserV1", "greetUserV1");
  if (stale.ok()) return fail("stale activation", absl::InternalError("was not refused"));
  std::printf("refused:   %s\n", std::string(stale.status().message()).c_str());
  absl::StatusOr<pgflow::FlowAlias> rolled_back =
      client->activate_flow_version("greetUser", "greetUserV1", "greetUserV2");
  if (!rolled_back.ok()) return fail("rollback", rolled_back.status());
  std::printf("rollback:  greetUser -> %s\n", rolled_back->active_flow_slug.value_or("?").c_str());
  if (!run(*client, "Ed", "start_flow", client->start_flow("greetUser", "Ed"))) return 1;

  bool clean = true;
  for (pgflow::EdgeWorker* w : {&*v1, &*v2_greet, &*v2_decorate}) w->stop();
  for (pgflow::EdgeWorker* w : {&*v1, &*v2_greet, &*v2_decorate}) clean = w->wait().ok() && clean;
  return clean ? 0 : 1;
}
