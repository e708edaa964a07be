#include "producer.h"

#include <chrono>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace pgflow::soak {

namespace {

using Clock = std::chrono::steady_clock;

std::string uuid_v4(std::mt19937_64& random) {
  std::uint64_t hi = random();
  std::uint64_t lo = random();
  hi = (hi & 0xffffffffffff0fffULL) | 0x0000000000004000ULL;  // version 4
  lo = (lo & 0x3fffffffffffffffULL) | 0x8000000000000000ULL;  // variant 10
  return absl::StrFormat("%08x-%04x-%04x-%04x-%012x", hi >> 32, (hi >> 16) & 0xffff, hi & 0xffff,
                         lo >> 48, lo & 0xffffffffffffULL);
}

// Mostly small maps (0..6 elements, empty ones included), sometimes a bigger one (20..40).
SoakInput random_input(std::mt19937_64& random) {
  SoakInput in;
  in.n =
      random() % 100 < 85 ? static_cast<int>(random() % 7) : 20 + static_cast<int>(random() % 21);
  in.base = static_cast<std::int64_t>(random() % 1'000'000);
  return in;
}

void sleep_until(Clock::time_point t, const std::stop_token& stop) {
  while (!stop.stop_requested() && Clock::now() < t) {
    std::this_thread::sleep_for(
        std::min<Clock::duration>(t - Clock::now(), std::chrono::milliseconds(50)));
  }
}

}  // namespace

Producer::Producer(pgflow::Client client, double rate, std::uint64_t seed)
    : client_(std::move(client)),
      rate_(rate),
      random_(seed),
      thread_([this](std::stop_token stop) { produce(stop); }) {}

Producer::~Producer() { stop(); }

void Producer::stop() {
  thread_.request_stop();
  if (thread_.joinable()) thread_.join();
}

void Producer::produce(std::stop_token stop) {
  const auto period =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(1.0 / rate_));
  auto next = Clock::now();
  while (!stop.stop_requested()) {
    StartedRun run{uuid_v4(random_), random_input(random_)};
    const bool started = start_one(run);
    {
      std::lock_guard<std::mutex> lock(mu_);
      if (started) {
        runs_.push_back(run);
        ++counts_.started;
      } else {
        abandoned_.push_back(run);
        ++counts_.abandoned;
      }
    }
    // A steady rate: starts delayed by an outage are not made up in a burst.
    next = std::max(next + period, Clock::now());
    sleep_until(next, stop);
  }
}

bool Producer::start_one(const StartedRun& run) {
  const auto give_up = Clock::now() + std::chrono::minutes(2);
  auto backoff = std::chrono::milliseconds(100);
  for (bool first = true;; first = false) {
    absl::StatusOr<std::string> id =
        client_.start_run(kFlowSlug, nlohmann::json(run.input), run.run_id);
    if (id.ok()) return true;
    if (id.status().code() == absl::StatusCode::kAlreadyExists && !first) {
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_.already_existed;
      return true;
    }
    {
      std::lock_guard<std::mutex> lock(mu_);
      ++counts_.start_errors;
      ++counts_.errors_by_code[absl::StatusCodeToString(id.status().code())];
    }
    // Not even a stop ends the retries early: an abandoned start leaves a run that may or may
    // not exist. The soak stops producing while PostgreSQL is up, so they end quickly.
    if (Clock::now() > give_up) return false;
    sleep_until(Clock::now() + backoff, {});
    backoff = std::min(backoff * 2, std::chrono::milliseconds(2000));
  }
}

std::vector<StartedRun> Producer::runs() const {
  std::lock_guard<std::mutex> lock(mu_);
  return runs_;
}

std::vector<StartedRun> Producer::abandoned() const {
  std::lock_guard<std::mutex> lock(mu_);
  return abandoned_;
}

Producer::Counts Producer::counts() const {
  std::lock_guard<std::mutex> lock(mu_);
  return counts_;
}

}  // namespace pgflow::soak
