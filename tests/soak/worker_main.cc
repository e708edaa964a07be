// pgflow_soak_worker URL DIR MAX_CONCURRENT: one worker process of the soak (tests/soak/README.md).
// Runs the soak flow (soak_flow.h) against URL (the driver's proxy), recording every handler
// execution in DIR/executions.<pid>.log. Once the worker has started (registered) it creates
// DIR/ready.<pid>, so the driver knows when to read its memory. Stops on SIGTERM/SIGINT; exits
// 0 after a clean stop, 1 when the worker failed to start or stopped by itself.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "execution_log.h"
#include "pgflow/log.h"
#include "pgflow/worker.h"
#include "soak_flow.h"

namespace {

// Each log record as one line on stderr (the driver's per-worker log file), after the time.
pgflow::LogSink timestamped_stderr() {
  return [](const pgflow::LogRecord& record) {
    const auto now = std::chrono::system_clock::now();
    const std::time_t secs = std::chrono::system_clock::to_time_t(now);
    const auto ms =
        std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() %
        1000;
    std::tm tm{};
    gmtime_r(&secs, &tm);
    const std::string line =
        absl::StrFormat("%02d:%02d:%02d.%03d pid=%d %s\n", tm.tm_hour, tm.tm_min, tm.tm_sec, ms,
                        getpid(), pgflow::to_log_line(record));
    [[maybe_unused]] const ssize_t written = ::write(2, line.data(), line.size());
  };
}

int fail(const std::string& what) {
  std::fprintf(stderr, "pgflow_soak_worker: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: pgflow_soak_worker URL DIR MAX_CONCURRENT\n");
    return 2;
  }
  const std::string url = argv[1];
  const std::string dir = argv[2];

  // SIGTERM and SIGINT are taken with sigtimedwait below; blocked before any thread starts, so
  // every worker thread inherits the mask.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

  absl::StatusOr<pgflow::soak::ExecutionWriter> writer = pgflow::soak::ExecutionWriter::open(dir);
  if (!writer.ok()) return fail(std::string(writer.status().message()));
  const auto flow = pgflow::soak::soak_flow(
      [&writer](const pgflow::Context& ctx, char event) { writer->record(ctx, event); });

  pgflow::WorkerConfig config;
  config.connection_string = url;
  config.max_concurrent = std::atoi(argv[3]);
  config.heartbeat_interval = std::chrono::seconds(1);
  config.stall_recovery_interval = std::chrono::seconds(2);
  config.stop_grace_period = std::chrono::seconds(10);
  config.startup_timeout = std::chrono::seconds(120);  // a respawn may meet a PostgreSQL restart
  config.log_sink = timestamped_stderr();
  config.log_level = pgflow::LogLevel::kInfo;
  absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(flow, config);
  if (!worker.ok()) return fail(absl::StrCat("start: ", worker.status().ToString()));
  // The stall watch tells live workers' tasks from killed ones' by this id (stall_watch.h).
  std::ofstream(absl::StrCat(dir, "/worker-id.", getpid())) << worker->worker_id() << "\n";
  std::ofstream(absl::StrCat(dir, "/ready.", getpid())) << "ready\n";

  const timespec tick{0, 200'000'000};
  while (worker->running()) {
    if (sigtimedwait(&stop_signals, nullptr, &tick) > 0) break;
  }
  const bool stopped_by_itself = !worker->running();
  worker->stop();
  absl::Status why = worker->wait();
  if (stopped_by_itself)
    return fail(absl::StrCat("the worker stopped by itself: ", why.ToString()));
  if (!why.ok()) return fail(absl::StrCat("stop: ", why.ToString()));
  return 0;
}
