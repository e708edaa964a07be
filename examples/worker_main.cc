// A worker process for deployment: serves the processOrder flow until SIGTERM/SIGINT, then
// stops gracefully (in-flight orders finish and are reported). Configure it with the
// environment, as a supervisor (systemd, Kubernetes) would:
//   DATABASE_URL            required: where pgflow lives
//   PGFLOW_MAX_CONCURRENT   handler threads (default 10)
//   PGFLOW_LOG_LEVEL        error | warn | info | debug (default info)
// Exit status: 0 after a signal-initiated stop, 1 when the worker could not start or stopped
// by itself (e.g. a fatal claim; the worker logs the reason).
#include <cstdlib>
#include <string>

#include "flows/orders.h"
#include "pgflow/worker.h"

int main() {
  pgflow::WorkerConfig config;  // connection_string defaults to DATABASE_URL
  if (const char* n = std::getenv("PGFLOW_MAX_CONCURRENT")) config.max_concurrent = std::atoi(n);
  if (const char* level = std::getenv("PGFLOW_LOG_LEVEL")) {
    const std::string l = level;
    config.log_level = l == "debug"   ? pgflow::LogLevel::kDebug
                       : l == "warn"  ? pgflow::LogLevel::kWarn
                       : l == "error" ? pgflow::LogLevel::kError
                                      : pgflow::LogLevel::kInfo;
  }
  // Why a worker could not start, or stopped by itself, is logged already.
  return pgflow::EdgeWorker::run(orders::definition(), config).ok() ? 0 : 1;
}
