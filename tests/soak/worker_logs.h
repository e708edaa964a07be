// A digest of the workers' logs (DIR/worker-<slot>.log): how many warning and error records
// they wrote, grouped by message (fields and values dropped), most frequent first. What the
// faults made the workers say, for the summary.
#ifndef PGFLOW_TESTS_SOAK_WORKER_LOGS_H_
#define PGFLOW_TESTS_SOAK_WORKER_LOGS_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace pgflow::soak {

struct LogDigest {
  std::int64_t warnings = 0;
  std::int64_t errors = 0;
  std::int64_t other = 0;  // lines that are not log records (a crash message, say)
  // ("warn message" or "error message", count), most frequent first.
  std::vector<std::pair<std::string, std::int64_t>> by_message;
};

LogDigest digest_worker_logs(const std::string& dir);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_WORKER_LOGS_H_
