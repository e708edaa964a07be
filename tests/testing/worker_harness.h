// Helpers for worker integration tests: a log sink that records, run waiting, quick SQL.
#ifndef PGFLOW_TESTS_TESTING_WORKER_HARNESS_H_
#define PGFLOW_TESTS_TESTING_WORKER_HARNESS_H_

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/context.h"
#include "pgflow/log.h"
#include "pgflow/worker.h"

namespace pgflow::testing {

// Keeps every log record (thread-safe) so tests can assert on what was logged.
class LogRecorder {
 public:
  struct Entry {
    LogLevel level;
    std::string message;
    std::vector<LogField> fields;
    std::string text() const;  // message and fields as one line
  };
  LogSink sink();
  std::vector<Entry> entries() const;
  // True when some record's message contains `needle`.
  bool contains(const std::string& needle) const;
  // Waits until some record's text (message and fields) contains `needle`; false when
  // `timeout` passes first (a guard against hanging, not a speed bound).
  bool wait_for_text(const std::string& needle,
                     std::chrono::seconds timeout = std::chrono::seconds(60)) const;

 private:
  mutable std::mutex mu_;
  mutable std::condition_variable logged_;
  std::vector<Entry> entries_;
};

// A worker configuration for tests: fast polling, heartbeats and recovery, debug logs.
WorkerConfig test_worker_config(const std::string& url, LogRecorder* logs = nullptr);

// Polls pgflow.runs until the run is completed or failed (or `timeout` passes) and returns
// get_run_with_states(run_id).
absl::StatusOr<nlohmann::json> wait_for_run(
    pg::Connection& conn, const std::string& run_id,
    std::chrono::seconds timeout = std::chrono::seconds(60));

// Runs a query and returns the first column of the first row as text ("" when no row).
absl::StatusOr<std::string> query_text(pg::Connection& conn, const std::string& sql,
                                       const std::vector<pg::Param>& params = {});

// Starts a run and returns its id.
absl::StatusOr<std::string> start_run(pg::Connection& conn, const std::string& flow_slug,
                                      const nlohmann::json& input);

// Polls `condition` every `poll` until it holds (true) or `timeout` passes (false). The
// timeout only keeps a broken build from hanging; a passing test never relies on it.
bool wait_for(const std::function<bool()>& condition,
              std::chrono::seconds timeout = std::chrono::seconds(60),
              std::chrono::milliseconds poll = std::chrono::milliseconds(5));

// Handlers that run until their stop token fires, counting starts and stops (cancellation
// tests: `[&holders](int x, Context& ctx) { return holders.hold(x, ctx); }`).
struct Holders {
  std::atomic<int> started{0};
  std::atomic<int> stopped{0};
  absl::StatusOr<int> hold(int x, Context& ctx) {
    ++started;
    if (!wait_for([&ctx] { return ctx.stop_token().stop_requested(); })) return x;
    ++stopped;
    return absl::CancelledError("asked to stop");
  }
};

// Polls `sql` (a boolean query) until it returns true or `timeout` passes.
absl::Status wait_until(pg::Connection& conn, const std::string& sql,
                        const std::vector<pg::Param>& params = {},
                        std::chrono::seconds timeout = std::chrono::seconds(60));

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_WORKER_HARNESS_H_
