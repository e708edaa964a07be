// pgflow_test_worker URL N [STEP]: a worker process for signal and crash tests. Without STEP it
// runs the wChild flow (tests/testing/child_flow.h) whose handler sleeps N ms; with STEP it runs
// that step of the step-queued wSplit flow (tests/testing/split_flow.h), chosen at run time
// through WorkerConfig::step, holding map elements from N on (none when N < 0). Runs
// EdgeWorker::run until SIGTERM/SIGINT; exits 0 after a clean stop, 1 otherwise.
// `pgflow_test_worker URL N --limited LOG` runs the wLimited flow (tests/testing/limited_flow.h)
// whose handler sleeps N ms and logs to LOG.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "pgflow/worker.h"
#include "testing/child_flow.h"
#include "testing/limited_flow.h"
#include "testing/split_flow.h"
#include "testing/worker_harness.h"

int main(int argc, char** argv) {
  const bool limited = argc == 5 && std::string(argv[3]) == "--limited";
  if (argc != 3 && argc != 4 && !limited) {
    std::fprintf(stderr, "usage: pgflow_test_worker URL N [STEP | --limited LOG]\n");
    return 2;
  }
  pgflow::WorkerConfig config = pgflow::testing::test_worker_config(argv[1]);
  config.log_sink = pgflow::stderr_log_sink();
  config.log_level = pgflow::LogLevel::kInfo;
  const int n = std::atoi(argv[2]);
  absl::Status s;
  if (limited) {
    s = pgflow::EdgeWorker::run(pgflow::testing::limited_flow(n, argv[4]), config);
  } else if (argc == 4) {
    config.step = argv[3];
    s = pgflow::EdgeWorker::run(pgflow::testing::split_flow(/*hold_from=*/n), config);
  } else {
    s = pgflow::EdgeWorker::run(pgflow::testing::child_flow(/*sleep_ms=*/n), config);
  }
  if (!s.ok()) {
    std::fprintf(stderr, "worker: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  return 0;
}
