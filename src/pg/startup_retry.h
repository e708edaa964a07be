// Riding out an unreachable database while starting: EdgeWorker::start and Client::connect
// retry transient failures (pg::is_transient) until their startup timeout.
#ifndef PGFLOW_PG_STARTUP_RETRY_H_
#define PGFLOW_PG_STARTUP_RETRY_H_

#include <chrono>
#include <functional>
#include <string_view>

#include "absl/status/status.h"

namespace pgflow::pg {

// Calls `attempt` (with 1, 2, ...) until it succeeds or fails with an error that is not
// transient; a transient failure is retried after a backoff delay (100 ms doubling to 10 s,
// jittered) while `timeout` has not passed since the first call, and `on_retry` (optional) is
// told before each wait. A zero timeout makes one attempt. When the timeout passes, the last
// error is returned with its code, SQLSTATE and message, the message saying that the database
// stayed unreachable for `timeout_name`.
absl::Status retry_while_unreachable(
    std::chrono::milliseconds timeout, std::string_view timeout_name,
    const std::function<absl::Status(int attempt)>& attempt,
    const std::function<void(const absl::Status& error, int attempt,
                             std::chrono::milliseconds delay)>& on_retry = {});

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_STARTUP_RETRY_H_
