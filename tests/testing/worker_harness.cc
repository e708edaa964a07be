#include "testing/worker_harness.h"

#include <algorithm>
#include <thread>

#include "absl/strings/str_cat.h"

namespace pgflow::testing {

std::string LogRecorder::Entry::text() const {
  std::string out = message;
  for (const auto& f : fields) absl::StrAppend(&out, " ", f.key, "=", f.value);
  return out;
}

LogSink LogRecorder::sink() {
  return [this](const LogRecord& r) {
    {
      std::lock_guard<std::mutex> lock(mu_);
      entries_.push_back({r.level, std::string(r.message), r.fields});
    }
    logged_.notify_all();
  };
}

std::vector<LogRecorder::Entry> LogRecorder::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_;
}

bool LogRecorder::contains(const std::string& needle) const {
  for (const auto& e : entries()) {
    if (e.message.find(needle) != std::string::npos) return true;
  }
  return false;
}

bool LogRecorder::wait_for_text(const std::string& needle, std::chrono::seconds timeout) const {
  std::unique_lock<std::mutex> lock(mu_);
  return logged_.wait_for(lock, timeout, [&] {
    return std::any_of(entries_.begin(), entries_.end(),
                       [&](const Entry& e) { return e.text().find(needle) != std::string::npos; });
  });
}

WorkerConfig test_worker_config(const std::string& url, LogRecorder* logs) {
  WorkerConfig c;
  c.connection_string = url;
  c.max_concurrent = 4;
  c.poll_interval = std::chrono::milliseconds(200);
  c.heartbeat_interval = std::chrono::milliseconds(200);
  c.stall_recovery_interval = std::chrono::milliseconds(300);
  c.stop_grace_period = std::chrono::seconds(10);
  c.log_level = LogLevel::kDebug;
  c.log_sink = logs ? logs->sink() : [](const LogRecord&) {};
  return c;
}

absl::StatusOr<std::string> query_text(pg::Connection& conn, const std::string& sql,
                                       const std::vector<pg::Param>& params) {
  absl::StatusOr<pg::Result> r = conn.exec(sql, params);
  if (!r.ok()) return r.status();
  if (r->rows() == 0) return std::string();
  return std::string(r->scalar());
}

bool wait_for(const std::function<bool()>& condition, std::chrono::seconds timeout,
              std::chrono::milliseconds poll) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!condition()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(poll);
  }
  return true;
}

absl::Status wait_until(pg::Connection& conn, const std::string& sql,
                        const std::vector<pg::Param>& params, std::chrono::seconds timeout) {
  const bool held = wait_for(
      [&] {
        absl::StatusOr<std::string> v = query_text(conn, sql, params);
        return v.ok() && *v == "t";
      },
      timeout, std::chrono::milliseconds(20));
  if (held) return absl::OkStatus();
  return absl::DeadlineExceededError(absl::StrCat("condition never held: ", sql));
}

absl::StatusOr<nlohmann::json> wait_for_run(pg::Connection& conn, const std::string& run_id,
                                            std::chrono::seconds timeout) {
  absl::Status done = wait_until(
      conn, "select status in ('completed', 'failed') from pgflow.runs where run_id = $1::uuid",
      {run_id}, timeout);
  if (!done.ok()) return done;
  absl::StatusOr<std::string> text =
      query_text(conn, "select pgflow.get_run_with_states($1::uuid)::text", {run_id});
  if (!text.ok()) return text.status();
  return nlohmann::json::parse(*text);
}

absl::StatusOr<std::string> start_run(pg::Connection& conn, const std::string& flow_slug,
                                      const nlohmann::json& input) {
  return query_text(conn, "select run_id::text from pgflow.start_flow($1, $2::jsonb)",
                    {flow_slug, input.dump()});
}

}  // namespace pgflow::testing
