// Quickstart: a typed flow with a map step and a condition, a worker and a client in one
// program. Run it with `scripts/demo.sh` (embedded PostgreSQL) or with DATABASE_URL set.
//
//   1. install/upgrade the schema (pgflow::migrate)
//   2. start a worker for the onboarding flow (examples/flows/onboarding.h)
//   3. start two runs with the client and wait for them
//   4. print each run's output and per-step timings
#include <cstdio>
#include <cstdlib>
#include <ctime>
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

// Seconds since the epoch of a timestamptz as PostgreSQL's JSON writes it
// ("2026-11-30T09:42:20.680669+00:00").
double epoch_seconds(const std::string& ts) {
  std::tm tm{};
  int offset_h = 0, offset_m = 0;
  double seconds = 0;
  char sign = '+';
  if (std::sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%lf%c%d:%d", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                  &tm.tm_hour, &tm.tm_min, &seconds, &sign, &offset_h, &offset_m) < 6) {
    return 0;
  }
  tm.tm_year -= 1900;
  tm.tm_mon -= 1;
  const double offset = (offset_h * 3600.0 + offset_m * 60.0) * (sign == '-' ? -1 : 1);
  return static_cast<double>(timegm(&tm)) + seconds - offset;
}

void print_run(const pgflow::RunState& run) {
  std::printf("run %s (%s): %s\n", run.run_id.c_str(), run.flow_slug.c_str(), run.status.c_str());
  std::printf("  input:  %s\n", run.input.dump().c_str());
  std::printf("  output: %s\n", run.output ? run.output->dump().c_str() : "null");
  const double start = epoch_seconds(run.started_at);
  for (const pgflow::StepState& s : run.steps) {
    std::printf("  %-10s %-9s", s.step_slug.c_str(), s.status.c_str());
    if (s.started_at && s.completed_at) {
      std::printf(" started +%6.1f ms, took %6.1f ms", (epoch_seconds(*s.started_at) - start) * 1000,
                  (epoch_seconds(*s.completed_at) - epoch_seconds(*s.started_at)) * 1000);
    } else if (s.skip_reason) {
      std::printf(" (%s)", s.skip_reason->c_str());
    }
    std::printf("\n");
  }
}

}  // namespace

int main() {
  const char* url = std::getenv("DATABASE_URL");
  if (url == nullptr || *url == '\0') {
    std::fprintf(stderr, "quickstart: set DATABASE_URL (scripts/demo.sh does it for you)\n");
    return 2;
  }
  if (absl::Status s = pgflow::migrate(url); !s.ok()) return fail("migrate", s);

  pgflow::WorkerConfig config{.connection_string = url, .max_concurrent = 4};
  config.log_level = pgflow::LogLevel::kWarn;  // keep the demo output readable
  absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(onboarding::flow, config);
  if (!worker.ok()) return fail("start worker", worker.status());

  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect({.connection_string = url});
  if (!client.ok()) return fail("connect", client.status());

  for (const char* email : {"ada@vip.example", "bob@example.com"}) {
    absl::StatusOr<pgflow::RunState> run = client->start_flow(onboarding::flow, {email});
    if (!run.ok()) return fail("start_flow", run.status());
    absl::StatusOr<pgflow::RunState> done = client->wait_for_run(run->run_id, std::chrono::seconds(60));
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
