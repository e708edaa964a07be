#include "pg/session.h"

#include <string>
#include <utility>

#include "pg/error.h"
#include "pgflow/status.h"

namespace pgflow::pg {

Session::Session(std::string conninfo, std::string application_name, Logger log,
                 std::function<absl::Status(pg::Connection&)> on_connect)
    : conninfo_(std::move(conninfo)),
      application_name_(std::move(application_name)),
      log_(std::move(log)),
      on_connect_(std::move(on_connect)) {}

absl::StatusOr<pg::Connection*> Session::connection() {
  if (conn_ && conn_->healthy()) return &*conn_;
  conn_.reset();
  absl::StatusOr<pg::Connection> fresh = pg::Connection::open(conninfo_, application_name_);
  if (!fresh.ok()) return fresh.status();
  if (on_connect_) {
    if (absl::Status s = on_connect_(*fresh); !s.ok()) return s;
  }
  conn_.emplace(std::move(*fresh));
  return &*conn_;
}

absl::Status Session::retry(const std::stop_token& stop, std::string_view what,
                            const std::function<absl::Status(pg::Connection&)>& op) {
  return retry<bool>(stop, what,
                     [&](pg::Connection& c) -> absl::StatusOr<bool> {
                       absl::Status s = op(c);
                       if (!s.ok()) return s;
                       return true;
                     })
      .status();
}

bool pause_after(const absl::Status& error, std::string_view what, internal::Backoff& backoff,
                 const Logger& log, const std::stop_token& stop) {
  auto delay = backoff.next();
  log.warn("database call failed; retrying", {{"operation", std::string(what)},
                                              {"error", std::string(error.message())},
                                              {"sqlstate", sql_state(error).value_or("")},
                                              {"retry_in_ms", std::to_string(delay.count())}});
  return internal::sleep_unless_stopped(delay, stop);
}

}  // namespace pgflow::pg
