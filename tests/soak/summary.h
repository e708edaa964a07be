// The soak's result: everything it counted, the verdict and the printed summary
// (tests/soak/README.md explains each line).
#ifndef PGFLOW_TESTS_SOAK_SUMMARY_H_
#define PGFLOW_TESTS_SOAK_SUMMARY_H_

#include <cstdint>
#include <cstdio>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "chaos.h"
#include "execution_log.h"
#include "producer.h"
#include "verify.h"
#include "worker_logs.h"

namespace pgflow::soak {

struct SoakReport {
  std::string settings;  // the flags, as one line
  double soak_seconds = 0;
  double drain_seconds = 0;
  bool drained = false;  // every run finished within the drain timeout
  Producer::Counts producer;
  ChaosCounts chaos;
  int respawns = 0;
  std::int64_t proxy_accepted = 0;
  std::int64_t proxy_refused = 0;
  int claims_cut_after_commit = 0;  // claims whose reply the proxy dropped after their commit
  Verification verification;
  DuplicateStats duplicates;
  LogDigest logs;
  std::optional<std::int64_t> witness_ready_rss;  // KiB
  std::optional<std::int64_t> witness_end_rss;
  std::vector<std::optional<std::int64_t>> end_rss;  // every slot, KiB
  std::vector<std::string> stop_problems;            // workers that did not stop cleanly at the end
  std::set<std::string> stalled_under_live_workers;  // tasks a live worker left to stall recovery
  std::int64_t deadlocks = 0;                        // 40P01 in the server log
};

// Why the soak failed; empty when it passed.
std::vector<std::string> failures(const SoakReport& report);

void print_summary(const SoakReport& report, std::FILE* out);

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_SUMMARY_H_
