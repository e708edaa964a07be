// workers [--all], workers pause|resume|deprecate: worker processes and the worker functions
// (deployments, WorkerConfig::function_name) they belong to.
#include <cstdio>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/statements.h"

namespace pgflow::cli {
namespace {

int list_workers(const Globals& g, bool all) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> found = query_json(*conn, kWorkersQuery, {all ? "true" : "false"});
  if (!found.ok()) return fail(found.status());
  if (g.json) {
    print_json(*found);
    return kOk;
  }
  Table functions({"FUNCTION", "STATE", "LIVE WORKERS", "PAUSED SINCE", "REASON"});
  for (const auto& f : (*found)["functions"]) {
    functions.add_row({f["function_name"], f["paused"].get<bool>() ? "paused" : "enabled",
                       display_text(f["live_workers"]), timestamp_text(f["paused_at"]),
                       display_text(f["pause_reason"])});
  }
  functions.print();
  std::printf("\n");
  Table workers({"WORKER ID", "FUNCTION", "STATE", "QUEUE", "SERVES", "LAST HEARTBEAT", "STARTED"});
  for (const auto& w : (*found)["workers"]) {
    std::string serves;
    for (const auto& s : w["serves"]) serves += (serves.empty() ? "" : ", ") + s.get<std::string>();
    workers.add_row(
        {w["worker_id"], w["function_name"], w["state"], w["queue_name"], serves,
         human_duration(absl::Seconds(w["heartbeat_age_seconds"].get<double>())) + " ago",
         timestamp_text(w["started_at"])});
  }
  if (workers.empty()) {
    std::printf(all ? "no workers\n" : "no running workers (--all shows stopped ones)\n");
  } else {
    workers.print();
  }
  return kOk;
}

struct PauseOptions {
  std::string function_name;
  std::string reason = "paused by an operator";
};

int pause(const Globals& g, const PauseOptions& o) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  // _pause_worker_function is the same one-way pause a fatal claim sets (docs/worker.md).
  absl::StatusOr<pg::Result> paused = conn->exec(kPauseWorkerFunction, {o.function_name, o.reason});
  if (!paused.ok()) return fail(paused.status());
  if (paused->rows() == 0) {
    return fail(absl::NotFoundError(
        absl::StrCat("worker function \"", o.function_name, "\" does not exist")));
  }
  if (g.json) {
    print_json({{"function_name", o.function_name}, {"paused", true}, {"reason", o.reason}});
  } else {
    std::printf(
        "worker function %s paused: its workers stop claiming and new ones are refused until "
        "`pgflow workers resume %s`\n",
        o.function_name.c_str(), o.function_name.c_str());
  }
  return kOk;
}

int resume(const Globals& g, const std::string& function_name) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<pg::Result> resumed = conn->exec(kResumeWorkerFunction, {function_name});
  if (!resumed.ok()) return fail(resumed.status());
  if (g.json) {
    print_json({{"function_name", function_name}, {"paused", false}});
  } else {
    std::printf("worker function %s resumed: its workers claim again\n", function_name.c_str());
  }
  return kOk;
}

// Deprecates one worker (by id) or every running worker of a function: each stops claiming
// at its next heartbeat, finishes what it holds and exits (a rolling deploy's old workers).
int deprecate(const Globals& g, const std::string& target) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> result = query_json(*conn, kDeprecateWorkers, {target});
  if (!result.ok()) return fail(result.status());
  if (!(*result)["known"].get<bool>()) {
    return fail(absl::NotFoundError(absl::StrCat("no worker or worker function \"", target, "\"")));
  }
  if (g.json) {
    print_json({{"target", target}, {"deprecated", (*result)["deprecated"]}});
    return kOk;
  }
  const auto& ids = (*result)["deprecated"];
  if (ids.empty()) {
    std::printf("nothing to deprecate: %s has no running worker that is not deprecated already\n",
                target.c_str());
  }
  for (const auto& id : ids) {
    std::printf(
        "worker %s deprecated: it stops claiming at its next heartbeat and exits when its tasks "
        "are done\n",
        id.get<std::string>().c_str());
  }
  return kOk;
}

}  // namespace

void add_worker_commands(CommandSet& commands) {
  CLI::App& app = commands.app();
  auto all = std::make_shared<bool>(false);
  CLI::App* workers = commands.add(
      &app, "workers",
      "worker functions (paused or not) and workers: alive, unresponsive, paused, deprecated or "
      "stopped; the queue and steps each serves; heartbeat age",
      [all](const Globals& g) { return list_workers(g, *all); });
  workers->add_flag("--all", *all, "also stopped workers");

  auto pause_options = std::make_shared<PauseOptions>();
  CLI::App* pause_command =
      commands.add(workers, "pause",
                   "pause a worker function: its workers stop claiming and new ones are refused "
                   "until `workers resume`",
                   [pause_options](const Globals& g) { return pause(g, *pause_options); });
  pause_command->add_option("FUNCTION", pause_options->function_name, "the worker function")
      ->required();
  pause_command->add_option("--reason", pause_options->reason,
                            "why (shown by `workers` and to refused workers)");

  auto resume_name = std::make_shared<std::string>();
  commands
      .add(workers, "resume", "lift a worker function's pause (an operator's or a fatal claim's)",
           [resume_name](const Globals& g) { return resume(g, *resume_name); })
      ->add_option("FUNCTION", *resume_name, "the worker function")
      ->required();

  auto target = std::make_shared<std::string>();
  commands
      .add(workers, "deprecate",
           "make a worker (WORKER_ID) or every running worker of FUNCTION stop claiming, finish "
           "its tasks and exit",
           [target](const Globals& g) { return deprecate(g, *target); })
      ->add_option("TARGET", *target, "a worker id or a worker function")
      ->required();
}

}  // namespace pgflow::cli
