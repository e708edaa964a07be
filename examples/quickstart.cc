// Quickstart: a typed flow with a map step and a condition, a worker and a client in one
// program. Run it with `scripts/demo.sh` (embedded PostgreSQL) or with DATABASE_URL set.
//
//   1. install/upgrade the schema (pgflow::migrate)
//   2. start a worker for the onboarding flow (examples/flows/onboarding.h)
//   3. start two runs with the client and wait for them
//   4. print each run's output and per-step timings
#include <cstdio>
#include <string>

#include "flows/onboarding.h"
#include "pgflow/client.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"

namespace {

int fail(const char* what, const absl::Status& s) {
  std::fprintf(stderr, "quickstart: %s: %s\n", what, std::string(s.message()).c_str());
  return 1;
}

// Milliseconds between two times.
double ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

void print_run(const pgflow::RunState& run) {
  std::printf("run %s (%s): %s\n", run.run_id.c_str(), run.flow_slug.c_str(),
              std::string(pgflow::to_string(run.status)).c_str());
  std::printf("  input:  %s\n", run.input.dump().c_str());
  std::printf("  output: %s\n", run.output ? run.output->dump().c_str() : "null");
  for (const pgflow::StepState& s : run.steps) {
    std::printf("  %-10s %-9s", s.step_slug.c_str(),
                std::string(pgflow::to_string(s.status)).c_str());
    if (s.started_at && s.completed_at) {
      std::printf(" started +%6.1f ms, took %6.1f ms", ms(*s.started_at - run.started_at),
                  ms(*s.completed_at - *s.started_at));
    } else if (s.skip_reason) {
      std::printf(" (%s)", std::string(pgflow::to_string(*s.skip_reason)).c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

int main() {
  // Every entry point reads DATABASE_URL when given no connection string; scripts/demo.sh sets it.
  if (absl::Status s = pgflow::migrate(); !s.ok()) return fail("migrate", s);

  pgflow::WorkerConfig config{.max_concurrent = 4};
  config.log_level = pgflow::LogLevel::kWarn;  // keep the demo output readable
  absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(onboarding::flow, config);
  if (!worker.ok()) return fail("start worker", worker.status());

  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();
  if (!client.ok()) return fail("connect", client.status());

  for (const char* email : {"ada@vip.example", "bob@example.com"}) {
    absl::StatusOr<pgflow::RunState> run = client->start_flow(onboarding::flow, {email});
    if (!run.ok()) return fail("start_flow", run.status());
    absl::StatusOr<pgflow::RunState> done =
        client->wait_for_run(run->run_id, std::chrono::seconds(60));
    if (!done.ok()) return fail("wait_for_run", done.status());
    print_run(*done);
    auto out = done->output_as<pgflow::FlowOutput<decltype(onboarding::flow)>>();
    if (!out.ok()) return fail("typed output", out.status());
    std::printf("  typed:  %d friends notified, gift: %s\n\n", out->get<"report">().count,
                out->get<"report">().with_gift ? "yes" : "no");
  }
  worker->stop();
  return worker->wait().ok() ? 0 : 1;
}
