#include "chaos.h"

#include <cstdio>
#include <thread>

#include "absl/strings/str_format.h"

namespace pgflow::soak {

namespace {

using Clock = std::chrono::steady_clock;

// The next time of one kind of fault.
class Timer {
 public:
  Timer(std::chrono::milliseconds every, std::mt19937_64& random) : every_(every), random_(random) {
    schedule(Clock::now());
  }
  // True (and the next one scheduled) when the fault is due.
  bool due(Clock::time_point now) {
    if (every_.count() <= 0 || now < next_) return false;
    schedule(now);
    return true;
  }

 private:
  void schedule(Clock::time_point from) {
    std::uniform_real_distribution<double> factor(0.5, 1.5);
    next_ = from + std::chrono::duration_cast<Clock::duration>(every_ * factor(random_));
  }
  std::chrono::milliseconds every_;
  std::mt19937_64& random_;
  Clock::time_point next_;
};

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

}  // namespace

absl::Status run_chaos(const ChaosPlan& plan, WorkerPool& workers, const Cluster& cluster,
                       TcpProxy& proxy, const std::atomic<bool>& interrupted, ChaosCounts& counts) {
  std::mt19937_64 random(plan.seed);
  Timer kill(plan.kill_every, random);
  Timer restart(plan.restart_every, random);
  Timer cut(plan.cut_every, random);
  const int slots = static_cast<int>(workers.slots().size());
  const auto start = Clock::now();
  const auto end = start + plan.duration;
  const auto warm = start + std::min<Clock::duration>(std::chrono::minutes(1), plan.duration / 4);
  while (!interrupted && Clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto now = Clock::now();
    for (std::string& exit : workers.poll()) {
      std::fprintf(stderr, "[%7.1f s] UNEXPECTED: %s\n", seconds_since(start), exit.c_str());
      counts.unexpected_exits.push_back(std::move(exit));
    }
    if (!counts.witness_warm_rss && now >= warm) {
      counts.witness_warm_rss = rss_kib(workers.slots()[kWitnessSlot].pid);
    }
    if (kill.due(now)) {
      const int slot =
          slots == 1 ? 0 : 1 + static_cast<int>(random() % static_cast<std::uint64_t>(slots - 1));
      const pid_t victim = workers.kill_and_respawn(slot);
      ++counts.kills;
      std::fprintf(stderr, "[%7.1f s] SIGKILL worker %d (pid %d)\n", seconds_since(start), slot,
                   victim);
    }
    if (cut.due(now)) {
      ++counts.cuts;
      if (counts.cuts % 2 == 0) {
        // Every other cut is exact: the next claim commits and its worker never sees the reply
        // (its tasks must come back at once, not through stall recovery).
        proxy.cut_after_commit_of("pgflow.claim_tasks(");
        std::fprintf(stderr, "[%7.1f s] the next claim loses its reply after its commit\n",
                     seconds_since(start));
      } else {
        const int live = proxy.cut();
        counts.connections_cut += live;
        std::fprintf(stderr, "[%7.1f s] cut %d proxied connections\n", seconds_since(start), live);
      }
    }
    if (restart.due(now)) {
      const auto began = Clock::now();
      if (absl::Status s = cluster.restart_immediate(); !s.ok()) return s;
      ++counts.restarts;
      counts.restart_seconds_max = std::max(counts.restart_seconds_max, seconds_since(began));
      std::fprintf(stderr, "[%7.1f s] PostgreSQL restarted (immediate) in %.1f s\n",
                   seconds_since(start), seconds_since(began));
    }
  }
  return absl::OkStatus();
}

}  // namespace pgflow::soak
