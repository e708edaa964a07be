#include "testing/fake_store.h"

#include <algorithm>
#include <condition_variable>
#include <mutex>
#include <utility>

#include "absl/time/time.h"
#include "worker/startup.h"

namespace pgflow::testing {
namespace {

using internal::Clock;

// Sleeps on the fake clock until `until`, `stop` or `wake`.
void sleep_until(const FakeClock& clock, Clock::Time until, const std::stop_token& stop,
                 const std::stop_token& wake) {
  std::stop_source either;
  std::stop_callback on_stop(stop, [&either] { either.request_stop(); });
  std::stop_callback on_wake(wake, [&either] { either.request_stop(); });
  clock.sleep_until(until, either.get_token());
}

bool wait_real(absl::Mutex& mu, const std::function<bool()>& cond) {
  absl::MutexLock lock(&mu);
  return mu.AwaitWithTimeout(absl::Condition(&cond), absl::Seconds(30));
}

}  // namespace

class FakeStore final : public internal::Store {
 public:
  FakeStore(FakeDatabase& db, internal::StoreRole role) : db_(db), role_(role) {}

  absl::StatusOr<internal::Handshake> handshake() override {
    return internal::Handshake{.protocol = internal::kWorkerProtocol,
                               .isolation = "read committed"};
  }
  absl::StatusOr<internal::DeployOutcome> deploy(const internal::Deployment& d) override {
    return internal::DeployOutcome{.status = "verified",
                                   .activation = "active",
                                   .flow_alias = d.flow_alias,
                                   .active_flow_slug = d.flow_slug};
  }
  absl::Status register_worker(const internal::Registration&, bool) override {
    absl::MutexLock lock(&db_.mu_);
    ++db_.registrations_;
    db_.registered_ = true;
    return absl::OkStatus();
  }

  absl::StatusOr<std::vector<internal::ClaimedMessage>> claim(
      const internal::ClaimRequest& request, const std::stop_token& stop) override {
    std::vector<internal::ClaimedMessage> out;
    bool hold;
    {
      absl::MutexLock lock(&db_.mu_);
      db_.claims_.push_back(request);
      while (!db_.queue_.empty() && static_cast<int>(out.size()) < request.slots) {
        out.push_back(std::move(db_.queue_.front()));
        db_.queue_.pop_front();
      }
      hold = !out.empty() && std::exchange(db_.hold_next_claim_, false);
      if (hold) ++db_.claims_held_;
    }
    if (hold) {  // the reply "arrives" only once the worker has been told to stop
      std::mutex m;
      std::condition_variable_any cv;
      std::unique_lock lock(m);
      cv.wait(lock, stop, [] { return false; });
    }
    return out;
  }

  absl::StatusOr<int> wake_waiting_tasks(int max_runs, const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    ++db_.timer_calls_;
    // Runs another transaction holds take their places in the batch and end nothing.
    const int ended = std::min(db_.due_timers_, std::max(0, max_runs - db_.held_timer_runs_));
    db_.due_timers_ -= ended;
    return ended;
  }

  void release_lost_claims(const std::string&) override {}  // its claims always answer

  absl::StatusOr<bool> has_visible_work(const std::string&, const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    if (!db_.can_look_) return absl::UnimplementedError("no has_visible_work (schema 0019)");
    ++db_.looks_;
    return !db_.queue_.empty();
  }

  void wait_for_work(Clock::Time until, const std::stop_token& stop) override {
    std::stop_token wake;
    {
      absl::MutexLock lock(&db_.mu_);
      if (std::exchange(db_.work_announced_, false)) return;
      wake = db_.work_wake_.get_token();
    }
    sleep_until(db_.clock_, until, stop, wake);
    absl::MutexLock lock(&db_.mu_);
    db_.work_announced_ = false;
  }

  absl::StatusOr<std::vector<internal::ReportedTask>> complete_tasks(
      const std::vector<internal::TaskResult>& results, const std::stop_token& stop) override {
    return report(results, stop);
  }
  absl::StatusOr<std::vector<internal::ReportedTask>> fail_tasks(
      const std::vector<internal::TaskResult>& results, const std::stop_token& stop) override {
    return report(results, stop);
  }

  absl::StatusOr<bool> heartbeat(const std::string&, const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    ++db_.heartbeats_;
    if (!db_.registered_) return absl::NotFoundError("no row in pgflow.workers");
    return db_.deprecated_;
  }
  absl::StatusOr<std::optional<std::string>> pause_reason(const std::string&,
                                                          const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    if (!db_.pause_readable_)
      return absl::PermissionDeniedError("permission denied for table worker_functions");
    return db_.pause_reason_;
  }
  absl::StatusOr<std::optional<int>> recover_stalled_tasks(std::chrono::milliseconds unless_within,
                                                           const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    ++db_.stall_recovery_passes_;
    db_.stall_recovery_unless_within_ = unless_within;
    return db_.stall_recovery_;
  }
  absl::StatusOr<std::string> stall_recovery_holders(std::chrono::milliseconds,
                                                     const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    return db_.stall_recovery_holders_;
  }

  bool wait_for_stop_announcements(Clock::Time until, const std::stop_token& stop) override {
    if (std::exchange(first_wait_, false)) return true;  // as after a (re)connection
    std::stop_token wake;
    {
      absl::MutexLock lock(&db_.mu_);
      if (std::exchange(db_.stop_announced_, false)) return true;
      wake = db_.stop_wake_.get_token();
    }
    sleep_until(db_.clock_, until, stop, wake);
    absl::MutexLock lock(&db_.mu_);
    return std::exchange(db_.stop_announced_, false);
  }
  absl::StatusOr<std::vector<std::uint64_t>> unwanted_tasks(
      const std::vector<internal::TaskRef>& tasks, const std::string&,
      const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    std::vector<std::uint64_t> ids;
    for (const internal::TaskRef& t : tasks) {
      if (db_.cancelled_runs_.contains(t.run_id)) ids.push_back(t.id);
    }
    return ids;
  }
  absl::Status mark_stopped(const std::string&, const std::stop_token&) override {
    absl::MutexLock lock(&db_.mu_);
    db_.marked_stopped_ = true;
    return absl::OkStatus();
  }

  // (Waiting while the database is down, as the real one retries: until it is up, or `stop`.)
  absl::StatusOr<nlohmann::json> run_input(const std::string& run_id,
                                           const std::stop_token& stop) override {
    if (!up_or_stopped(stop)) return absl::CancelledError("stopped while retrying: run input");
    return nlohmann::json{{"run", run_id}};
  }
  void disconnect() override {}

 private:
  // Waits while the database is down: true once it is up, false when `stop` came first.
  bool up_or_stopped(const std::stop_token& stop) {
    absl::Mutex& mu = db_.mu_;
    std::stop_callback wake(stop, [&mu] { absl::MutexLock lock(&mu); });
    absl::MutexLock lock(&mu);
    auto ready = [&]() ABSL_EXCLUSIVE_LOCKS_REQUIRED(db_.mu_) {
      return !db_.down_ || stop.stop_requested();
    };
    mu.Await(absl::Condition(&ready));
    return !db_.down_;
  }

  // Records the results (waiting while the database is down: until it is up, or `stop`).
  absl::StatusOr<std::vector<internal::ReportedTask>> report(
      const std::vector<internal::TaskResult>& results, const std::stop_token& stop) {
    if (!up_or_stopped(stop)) return absl::CancelledError("stopped while retrying: report");
    absl::MutexLock lock(&db_.mu_);
    std::vector<internal::ReportedTask> out;
    for (const internal::TaskResult& r : results) {
      db_.reported_.push_back(r);
      auto answer = db_.report_answers_.find(r.run_id);
      out.push_back({r.step_slug, answer != db_.report_answers_.end() ? answer->second
                                  : r.ok                              ? "completed"
                                                                      : "failed"});
    }
    return out;
  }

  FakeDatabase& db_;
  internal::StoreRole role_;
  bool first_wait_ = true;
};

// ---- FakeDatabase ----

void FakeDatabase::add_task(const std::string& run_id, const std::string& step, int timeout_seconds,
                            nlohmann::json input) {
  std::stop_source wake;
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back({.outcome = "claimed",
                      .message_id = std::to_string(next_message_id_++),
                      .run_id = run_id,
                      .step_slug = step,
                      .input = std::move(input),
                      .timeout_seconds = timeout_seconds});
    work_announced_ = true;
    wake = std::exchange(work_wake_, std::stop_source());
  }
  wake.request_stop();
}

void FakeDatabase::hold_next_claim_until_stop() {
  absl::MutexLock lock(&mu_);
  hold_next_claim_ = true;
}

int FakeDatabase::claims_held() const {
  absl::MutexLock lock(&mu_);
  return claims_held_;
}

void FakeDatabase::add_fatal_message(const std::string& message_id, const std::string& reason) {
  std::stop_source wake;
  {
    absl::MutexLock lock(&mu_);
    queue_.push_back({.outcome = "fatal", .message_id = message_id, .reason = reason});
    work_announced_ = true;
    wake = std::exchange(work_wake_, std::stop_source());
  }
  wake.request_stop();
}

void FakeDatabase::cancel_run(const std::string& run_id, bool announced) {
  std::stop_source wake;
  {
    absl::MutexLock lock(&mu_);
    cancelled_runs_.insert(run_id);
    if (!announced) return;
    stop_announced_ = true;
    wake = std::exchange(stop_wake_, std::stop_source());
  }
  wake.request_stop();
}

void FakeDatabase::set_down(bool down) {
  absl::MutexLock lock(&mu_);
  down_ = down;
}

void FakeDatabase::unregister() {
  absl::MutexLock lock(&mu_);
  registered_ = false;
}

int FakeDatabase::registrations() const {
  absl::MutexLock lock(&mu_);
  return registrations_;
}

void FakeDatabase::set_deprecated(bool deprecated) {
  absl::MutexLock lock(&mu_);
  deprecated_ = deprecated;
}

void FakeDatabase::answer_reports_of(const std::string& run_id, const std::string& status) {
  absl::MutexLock lock(&mu_);
  report_answers_[run_id] = status;
}

void FakeDatabase::set_pause_reason(std::optional<std::string> reason, bool readable) {
  absl::MutexLock lock(&mu_);
  pause_reason_ = std::move(reason);
  pause_readable_ = readable;
}

void FakeDatabase::set_stall_recovery(std::optional<int> requeued, std::string holders) {
  absl::MutexLock lock(&mu_);
  stall_recovery_ = requeued;
  stall_recovery_holders_ = std::move(holders);
}

std::vector<internal::TaskResult> FakeDatabase::reported() const {
  absl::MutexLock lock(&mu_);
  return reported_;
}

std::vector<internal::ClaimRequest> FakeDatabase::claims() const {
  absl::MutexLock lock(&mu_);
  return claims_;
}

int FakeDatabase::looks() const {
  absl::MutexLock lock(&mu_);
  return looks_;
}

void FakeDatabase::set_can_look(bool can) {
  absl::MutexLock lock(&mu_);
  can_look_ = can;
}

void FakeDatabase::set_due_timers(int due, int held_runs) {
  absl::MutexLock lock(&mu_);
  due_timers_ = due;
  held_timer_runs_ = held_runs;
}

int FakeDatabase::due_timers() const {
  absl::MutexLock lock(&mu_);
  return due_timers_;
}

int FakeDatabase::timer_calls() const {
  absl::MutexLock lock(&mu_);
  return timer_calls_;
}

int FakeDatabase::heartbeats() const {
  absl::MutexLock lock(&mu_);
  return heartbeats_;
}

bool FakeDatabase::marked_stopped() const {
  absl::MutexLock lock(&mu_);
  return marked_stopped_;
}

bool FakeDatabase::wait_for_reported(size_t n) const {
  return wait_real(mu_, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return reported_.size() >= n; });
}

bool FakeDatabase::wait_for_heartbeats(int n) const {
  return wait_real(mu_, [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return heartbeats_ >= n; });
}

std::chrono::milliseconds FakeDatabase::stall_recovery_unless_within() const {
  absl::MutexLock lock(&mu_);
  return stall_recovery_unless_within_;
}

bool FakeDatabase::wait_for_stall_recovery_passes(int n) const {
  return wait_real(mu_,
                   [&]() ABSL_NO_THREAD_SAFETY_ANALYSIS { return stall_recovery_passes_ >= n; });
}

internal::StoreFactory fake_stores(FakeDatabase& db) {
  return [&db](internal::StoreRole role, const std::string&,
               const Logger&) -> std::unique_ptr<internal::Store> {
    return std::make_unique<FakeStore>(db, role);
  };
}

}  // namespace pgflow::testing
