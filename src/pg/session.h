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
                          const std::function<absl::StatusOr<T>(pg::Connection&)>& op);
  absl::Status retry(const std::stop_token& stop, std::string_view what,
                     const std::function<absl::Status(pg::Connection&)>& op);

 private:
  // Logs a transient failure, drops a broken connection and waits; false when stopped.
  bool pause_after(const absl::Status& error, std::string_view what, const std::stop_token& stop);

  std::string conninfo_;
  std::string application_name_;
  Logger log_;
  std::function<absl::Status(pg::Connection&)> on_connect_;
  std::optional<pg::Connection> conn_;
  internal::Backoff backoff_;
};

template <typename T>
absl::StatusOr<T> Session::retry(const std::stop_token& stop, std::string_view what,
                                 const std::function<absl::StatusOr<T>(pg::Connection&)>& op) {
  while (true) {
    absl::StatusOr<pg::Connection*> conn = connection();
    absl::StatusOr<T> result = conn.ok() ? op(**conn) : absl::StatusOr<T>(conn.status());
    if (result.ok()) {
      backoff_.reset();
      return result;
    }
    if (!pg::is_transient(result.status())) return result.status();
    if (!pause_after(result.status(), what, stop)) {
      return absl::CancelledError("stopped while retrying: " + std::string(what));
    }
  }
}

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_SESSION_H_
