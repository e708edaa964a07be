// Links against the installed package and uses its public API, as the README's users do: a
// typed flow, the migrations, a client and a worker. Without arguments (install.consumer) it
// checks what needs no database; given a database URL (install.consumer_runs_a_flow, on a
// database the installed `pgflow migrate` set up) it runs the flow there with a worker.
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <string>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"

int fail(const char* what, const absl::Status& status) {
  std::fprintf(stderr, "could not %s: %s\n", what, std::string(status.message()).c_str());
  return 1;
}

// A tiny typed flow: proves the installed headers (detail/ included) compile in a consumer.
const auto greet =
    pgflow::Flow<"greetUsers", std::vector<std::string>>()
        .map<"hello">([](const std::string& name) { return "hello " + name; })
        .step<"count">(pgflow::after<"hello">,
                       [](const std::vector<std::string>& greetings) { return greetings.size(); });

// Runs the flow once on the database at `url` (migrated): a worker, a typed start, a wait for
// the run, its typed output. The Client and EdgeWorker code paths, with libpq and Abseil linked
// from the installed package's dependencies.
int run_against(const std::string& url) {
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect({.connection_string = url});
  if (!client.ok()) return fail("connect", client.status());
  absl::StatusOr<pgflow::EdgeWorker> worker =
      pgflow::EdgeWorker::start(greet, {.connection_string = url});
  if (!worker.ok()) return fail("start the worker", worker.status());
  absl::StatusOr<pgflow::RunState> run =
      client->start_flow(greet, std::vector<std::string>{"ada", "grace"});
  if (!run.ok()) return fail("start a run", run.status());
  absl::StatusOr<pgflow::RunState> done =
      client->wait_for_run(run->run_id, std::chrono::seconds(60));
  worker->stop();
  if (absl::Status stopped = worker->wait(); !stopped.ok()) return fail("stop the worker", stopped);
  if (!done.ok()) return fail("wait for the run", done.status());
  const pgflow::StepState* count = done->step("count");
  absl::StatusOr<std::size_t> greeted =
      count ? count->output_as<std::size_t>() : absl::NotFoundError("no step count");
  if (!greeted.ok()) return fail("read the output", greeted.status());
  std::printf("run %s %s: greeted %zu\n", done->run_id.c_str(),
              std::string(pgflow::to_string(done->status)).c_str(), *greeted);
  return done->status == pgflow::RunStatus::kCompleted && *greeted == 2 ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc > 1) return run_against(argv[1]);
  const auto migrations = pgflow::bundled_migrations();
  if (migrations.empty()) {
    std::fprintf(stderr, "no embedded migrations\n");
    return 1;
  }
  std::printf("pgflow carries %zu migrations, first %s\n", migrations.size(),
              migrations.front().file_name().c_str());
  std::printf("flow shape: %s\n", pgflow::shape_of(greet).dump().c_str());
  return pgflow::validate(greet).ok() ? 0 : 1;
}
