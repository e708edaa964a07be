// pgflow_test_worker URL SLEEP_MS: a worker process for signal tests. Runs the wChild flow
// (tests/testing/child_flow.h) with EdgeWorker::run until SIGTERM/SIGINT; exits 0 after a
// clean stop, 1 otherwise.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pgflow/worker.h"
#include "testing/child_flow.h"
#include "testing/worker_harness.h"

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: pgflow_test_worker URL SLEEP_MS\n");
    return 2;
  }
  pgflow::WorkerConfig config = pgflow::testing::test_worker_config(argv[1]);
  config.log_sink = pgflow::stderr_log_sink();
  config.log_level = pgflow::LogLevel::kInfo;
  absl::Status s =
      pgflow::EdgeWorker::run(pgflow::testing::child_flow(std::atoi(argv[2])), config);
  if (!s.ok()) {
    std::fprintf(stderr, "worker: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
