#include "worker/store_listening.h"

#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "pg/connection.h"

namespace pgflow::internal {
namespace {

std::chrono::milliseconds until_from_now(Clock::Time until) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(until -
                                                               std::chrono::steady_clock::now());
}

// Takes the rest of a burst of announcements already delivered, so that it counts once.
void drain_burst(pg::Connection& conn, const std::stop_token& stop) {
  absl::StatusOr<std::optional<pg::Notification>> more;
  do {
    more = conn.wait_notification(std::chrono::steady_clock::now(), stop);
  } while (more.ok() && more->has_value());
}

}  // namespace

StoreListening::StoreListening(std::shared_ptr<pg::SharedSession> statements,
                               std::optional<pg::Session> own, std::shared_ptr<bool> reconnected,
                               const Logger& log)
    : log_(log),
      reconnected_(std::move(reconnected)),
      statements_(std::move(statements)),
      listen_session_(std::move(own)) {}

void StoreListening::wait_for_work(Clock::Time until, const std::stop_token& stop) {
  on_listening(stop, [&](pg::Session& listening) {
    absl::StatusOr<pg::Connection*> conn = connect(listening);
    if (!conn.ok()) {
      // The statement connection: the next claim retries it with backoff. A listen
      // connection alone: polls until it is back.
      if (listen_session_) internal::sleep_unless_stopped(until_from_now(until), stop);
      return;
    }
    // A listen connection of its own was just (re)established, after the claim that found
    // nothing: work committed in between was not announced, so read once more first. (On the
    // statement connection the LISTEN precedes the claim: nothing to catch up.)
    if (listen_session_ && std::exchange(*reconnected_, false)) return;
    auto woke = (*conn)->wait_notification(until, stop);
    if (!woke.ok()) {
      listening.reset();
      return;
    }
    if (woke->has_value()) drain_burst(**conn, stop);  // one read for a burst
  });
}

bool StoreListening::wait_for_stop_announcements(Clock::Time until, const std::stop_token& stop) {
  bool announced_any = false;
  on_listening(stop, [&](pg::Session& listening) {
    announced_any = wait_for_stop_announcements_on(listening, until, stop);
  });
  return announced_any;
}

void StoreListening::on_listening(const std::stop_token& stop,
                                  absl::FunctionRef<void(pg::Session&)> wait) {
  if (listen_session_) return wait(*listen_session_);
  (void)statements_->run(stop, [&](pg::Session& s) {
    wait(s);
    return absl::OkStatus();
  });
}

bool StoreListening::wait_for_stop_announcements_on(pg::Session& listening, Clock::Time until,
                                                    const std::stop_token& stop) {
  while (!stop.stop_requested() && std::chrono::steady_clock::now() < until) {
    absl::StatusOr<pg::Connection*> conn = connect(listening);
    if (!conn.ok()) {
      // Unreachable: wait as before (the heartbeat asks at every beat meanwhile); the
      // heartbeat's retries log an unreachable database, connect() a listen connection's outage.
      internal::sleep_unless_stopped(until_from_now(until), stop);
      return false;
    }
    if (*reconnected_) {
      *reconnected_ = false;
      return true;
    }
    auto announced = (*conn)->wait_notification(until, stop);
    if (!announced.ok()) {
      listening.reset();
      continue;
    }
    if (!announced->has_value()) return false;  // until, or stop
    drain_burst(**conn, stop);                  // one check for a burst
    return true;
  }
  return false;
}

void StoreListening::disconnect() {
  if (listen_session_) listen_session_->reset();
}

absl::StatusOr<pg::Connection*> StoreListening::connect(pg::Session& listening) {
  if (!listen_session_) return listening.connection();
  if (listen_down_ && std::chrono::steady_clock::now() < listen_retry_at_) {
    return absl::UnavailableError("the listen connection is down; tried again after a backoff");
  }
  absl::StatusOr<pg::Connection*> conn = listening.connection();
  if (!conn.ok()) {
    listen_retry_at_ = std::chrono::steady_clock::now() + listen_backoff_.next();
    if (!std::exchange(listen_down_, true)) {
      log_.warn(
          "cannot reach the listen connection (listen_connection_string); polling at "
          "poll_interval, and checking for stopped tasks at each heartbeat, until it is back",
          {{"error", std::string(conn.status().message())}});
    }
  } else if (std::exchange(listen_down_, false)) {
    listen_backoff_.reset();
    log_.info("the listen connection is back");
  }
  return conn;
}

}  // namespace pgflow::internal
