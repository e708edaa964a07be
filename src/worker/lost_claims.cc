#include "worker/lost_claims.h"

#include <cstddef>
#include <utility>

#include "absl/status/statusor.h"
#include "internal/status_macros.h"
#include "pgflow/status.h"
#include "worker/statements.h"

namespace pgflow::internal {
namespace {

// How long a release waits for its claim if it still runs on the server, or for its runs
// (lock_timeout): the first time, and for a claim already found running.
constexpr char kFirstWait[] = "1s";
constexpr char kOwedWait[] = "50ms";
constexpr std::size_t kMaxOwed = 10;

}  // namespace

void LostClaims::sent(std::string claim_id) {
  if (owed_.size() >= kMaxOwed) {
    log_.warn(
        "gave up giving back a claim whose reply was lost; its tasks wait for stall "
        "recovery",
        {{"claim_id", owed_.front().claim_id}});
    owed_.erase(owed_.begin());
  }
  owed_.push_back({.claim_id = std::move(claim_id)});
}

void LostClaims::answered() { owed_.pop_back(); }

absl::Status LostClaims::release(pg::Connection& c, const std::string& worker_id,
                                 const std::stop_token& stop) {
  for (auto it = owed_.begin(); it != owed_.end() && !stop.stop_requested();) {
    absl::StatusOr<pg::Result> r =
        c.exec(kReleaseClaim,
               {worker_id, it->claim_id, std::string(it->still_running ? kOwedWait : kFirstWait)});
    if (!r.ok() && c.healthy() && sql_state(r.status()) == "55P03") {
      if (!it->still_running) {
        log_.warn(
            "a claim whose reply was lost could not be given back yet (it still runs on the "
            "server, or its runs are locked); trying again before later claims",
            {{"claim_id", it->claim_id}});
      }
      it->still_running = true;
      ++it;
      continue;
    }
    PGFLOW_RETURN_IF_ERROR(r.status());
    if (r->scalar() != "0") {
      log_.warn("gave back the tasks of a claim whose reply was lost; they are queued again",
                {{"claim_id", it->claim_id}, {"tasks", std::string(r->scalar())}});
    }
    it = owed_.erase(it);
  }
  return absl::OkStatus();
}

void LostClaims::give_up(std::string_view why_untried) const {
  for (const Owed& o : owed_) {
    log_.warn("stopping with a claim whose reply was lost; its tasks wait for stall recovery",
              {{"claim_id", o.claim_id},
               {"reason", o.still_running ? "it still runs on the server, or its runs are locked"
                                          : std::string(why_untried)}});
  }
}

}  // namespace pgflow::internal
