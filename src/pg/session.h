// One thread's database session: a connection that is (re)established on demand, and a
// retry loop that rides out transient failures.
#ifndef PGFLOW_PG_SESSION_H_
#define PGFLOW_PG_SESSION_H_

#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "internal/backoff.h"
#include "pg/connection.h"
#include "pg/error.h"
#include "pgflow/log.h"

namespace pgflow::pg {

// Logs a transient failure of `what` and waits for `backoff`'s next delay; false when stopped.
bool pause_after(const absl::Status& error, std::string_view what, internal::Backoff& backoff,
                 const Logger& log, const std::stop_token& stop);

// Calls `attempt` (one try: absl::StatusOr<T>()) until it succeeds or fails with a
// non-transient error, pausing between tries (pause_after); kCancelled when `stop` is
// requested while paused. Session::retry tries on its connection; a caller that shares one
// (SharedSession) takes a turn per try, so others use the connection while it pauses.
template <typename T, typename Attempt>
absl::StatusOr<T> retry_transient(const std::stop_token& stop, std::string_view what,
                                  internal::Backoff& backoff, const Logger& log,
                                  Attempt&& attempt) {
  while (true) {
    absl::StatusOr<T> result = attempt();
    if (result.ok()) {
      backoff.reset();
      return result;
    }
    if (!pg::is_transient(result.status())) return result.status();
    if (!pause_after(result.status(), what, backoff, log, stop)) {
      return absl::CancelledError("stopped while retrying: " + std::string(what));
    }
  }
}

class Session {
 public:
  // `on_connect` runs on every new connection (e.g. LISTEN).
  Session(std::string conninfo, std::string application_name, Logger log,
          std::function<absl::Status(pg::Connection&)> on_connect = {});

  // The live connection, connecting first if there is none.
  absl::StatusOr<Connection*> connection();
  // Forgets the connection (closing it); the next call reconnects.
  void reset() { conn_.reset(); }

  // Runs `op` on the connection until it succeeds or fails with a non-transient error.
  // Transient errors (see pg::is_transient) are logged, the connection is dropped when it is
  // broken, and `op` is retried after a backoff delay. Returns kCancelled when `stop` is
  // requested while waiting to retry.
  template <typename T>
  absl::StatusOr<T> retry(const std::stop_token& stop, std::string_view what,
                          const std::function<absl::StatusOr<T>(pg::Connection&)>& op) {
    return retry_transient<T>(stop, what, backoff_, log_, [&] { return attempt<T>(op); });
  }
  absl::Status retry(const std::stop_token& stop, std::string_view what,
                     const std::function<absl::Status(pg::Connection&)>& op);

  // One try of `op` on the connection (connecting first); a connection the failure broke is
  // dropped, so the next try reconnects.
  template <typename T>
  absl::StatusOr<T> attempt(const std::function<absl::StatusOr<T>(pg::Connection&)>& op) {
    absl::StatusOr<pg::Connection*> conn = connection();
    absl::StatusOr<T> result = conn.ok() ? op(**conn) : absl::StatusOr<T>(conn.status());
    if (!result.ok() && conn_ && !conn_->healthy()) conn_.reset();
    return result;
  }

 private:
  std::string conninfo_;
  std::string application_name_;
  Logger log_;
  std::function<absl::Status(pg::Connection&)> on_connect_;
  std::optional<pg::Connection> conn_;
  internal::Backoff backoff_;
};

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_SESSION_H_
