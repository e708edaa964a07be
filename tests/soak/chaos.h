// The soak's faults and when they happen. Each kind of fault has a mean interval (0: never);
// the next one of a kind comes after that interval times a random factor in [0.5, 1.5), drawn
// from the soak's seed. run_chaos() is the driver's loop while runs are produced: it injects
// due faults, replaces workers that exited by themselves, and records the witness worker's
// memory.
#ifndef PGFLOW_TESTS_SOAK_CHAOS_H_
#define PGFLOW_TESTS_SOAK_CHAOS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "cluster.h"
#include "testing/tcp_proxy.h"
#include "workers.h"

namespace pgflow::soak {

using ::pgflow::testing::TcpProxy;

struct ChaosPlan {
  std::chrono::milliseconds duration{0};
  std::chrono::milliseconds kill_every{0};     // SIGKILL a random worker (never the witness)
  std::chrono::milliseconds restart_every{0};  // pg_ctl restart -m immediate
  std::chrono::milliseconds cut_every{0};      // cut every connection through the proxy, or
                                               // (every other time) one claim after its commit
  std::uint64_t seed = 0;
};

struct ChaosCounts {
  int kills = 0;
  int restarts = 0;
  int cuts = 0;
  int connections_cut = 0;
  double restart_seconds_max = 0;             // the longest pg_ctl restart
  std::vector<std::string> unexpected_exits;  // workers that exited by themselves
  std::optional<std::int64_t>
      witness_warm_rss;  // the witness's VmRSS after a minute (or a quarter)
};

// Slot 0 is the witness: never killed (unless it is the only worker), so its memory at the
// start and at the end spans the whole soak.
inline constexpr int kWitnessSlot = 0;

// Runs for plan.duration (or until `interrupted`), injecting faults. A failed restart is an
// error (the soak cannot go on); everything else is counted.
absl::Status run_chaos(const ChaosPlan& plan, WorkerPool& workers, const Cluster& cluster,
                       TcpProxy& proxy, const std::atomic<bool>& interrupted, ChaosCounts& counts);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_CHAOS_H_
