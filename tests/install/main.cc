// Links against the installed package and uses its public API, as the README's users do: a
// typed flow, the migrations, a client and a worker. Given a database URL it starts a run and
// a worker against it; without one (the install test) it proves that all of this compiles and
// links against the installed headers and archive, and checks what needs no database.
#include <cstdio>
#include <string>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"

// A tiny typed flow: proves the installed headers (detail/ included) compile in a consumer.
const auto greet =
    pgflow::Flow<"greetUsers", std::vector<std::string>>()
        .map<"hello">([](const std::string& name) { return "hello " + name; })
        .step<"count">(pgflow::after<"hello">,
                       [](const std::vector<std::string>& greetings) { return greetings.size(); });

// Starts a run and a worker that stops after it: the Client and EdgeWorker code paths, with
// libpq and Abseil linked from the installed package's dependencies.
int run_against(const std::string& url) {
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect({.connection_string = url});
  if (!client.ok()) return 1;
  absl::StatusOr<pgflow::EdgeWorker> worker =
      pgflow::EdgeWorker::start(greet, {.connection_string = url});
  if (!worker.ok()) return 1;
  absl::StatusOr<std::string> run = client->start_run(greet, std::vector<std::string>{"a"});
  worker->stop();
  return run.ok() && worker->wait().ok() ? 0 : 1;
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
