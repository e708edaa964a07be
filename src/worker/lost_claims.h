// The claims of a poller's store whose reply never arrived (worker protocol 6): a claim whose
// connection broke may have committed, may still commit, or may never begin, and the tasks it
// started would wait for stall recovery under a worker that does not know it holds them. Each
// is owed until pgflow.release_claim answers for it: that release waits for a claim still
// running and stops one not yet begun (schema 0030). Claims are one at a time (the poller's),
// so this is used from one thread.
#ifndef PGFLOW_WORKER_LOST_CLAIMS_H_
#define PGFLOW_WORKER_LOST_CLAIMS_H_

#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "pg/connection.h"
#include "pgflow/log.h"

namespace pgflow::internal {

class LostClaims {
 public:
  explicit LostClaims(const Logger& log) : log_(log) {}

  // A claim with this id is about to be sent: it is owed until answered(). Past 10 owed, the
  // oldest is given up to stall recovery (and said), so that the claims owed cannot slow every
  // claim without end.
  void sent(std::string claim_id);
  // The last claim sent got its reply, or the server refused it: it committed nothing unseen.
  void answered();
  bool empty() const { return owed_.empty(); }

  // Gives back each owed claim on `c` (its tasks are queued again, visible at once), stopping
  // between releases once `stop` is requested. A release waits for a claim still running at
  // most 1 s the first time and 50 ms after (lock_timeout), so that claiming goes on
  // meanwhile: one that still runs stays owed. Any other error of a release is returned, its
  // claim still owed; a stop between releases leaves the rest owed too.
  absl::Status release(pg::Connection& c, const std::string& worker_id,
                       const std::stop_token& stop = {});
  // Logs each claim still owed as left to stall recovery, saying why: it still ran on the
  // server at its last try, or else `why_untried` (the last error, or that time ran out).
  void give_up(std::string_view why_untried) const;

 private:
  struct Owed {
    std::string claim_id;
    bool still_running = false;  // a release timed out waiting for it (said once)
  };

  Logger log_;
  std::vector<Owed> owed_;  // oldest first
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_LOST_CLAIMS_H_
