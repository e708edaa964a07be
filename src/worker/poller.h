// The fetch loop: waits for a free handler slot, reads and claims up to that many messages in
// one round trip, registers each claimed task in InFlight and hands it to a handler thread,
// then reads again at once while the queue may hold more, or sleeps until new work is
// announced (LISTEN, bursts coalesced) or the poll interval passes. Poll-only, it sleeps
// kFlowingPollDelay after a read that found work, twice as long after each that found none,
// at most the poll interval; once a read found none it only looks at the queue (a cheap
// statement) at that cadence until there is work to claim. A fatal claim (unsupported
// messages: the database paused the worker function) stops the worker with one error line.
#ifndef PGFLOW_WORKER_POLLER_H_
#define PGFLOW_WORKER_POLLER_H_

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>

#include "absl/status/status.h"
#include "pgflow/flow_definition.h"
#include "pgflow/log.h"
#include "worker/clock.h"
#include "worker/executor.h"
#include "worker/in_flight.h"
#include "worker/reporter.h"
#include "worker/store.h"
#include "worker/task_runner.h"

namespace pgflow::internal {

struct PollerConfig {
  ClaimRequest claim = {};  // its slots: at most batch_size
  int batch_size = 10;
  std::string function_name = {};
  std::chrono::milliseconds poll_interval{1000};
  bool poll_only = false;  // no announcements: polls at an adaptive interval
};

// Poll-only: how soon the poller reads again after a read that found work (but not a full
// batch); each read that finds none doubles it, up to the poll interval.
inline constexpr std::chrono::milliseconds kFlowingPollDelay{20};

class Poller {
 public:
  // `stop_worker` stops the whole worker with a reason (a fatal claim).
  Poller(PollerConfig config, const FlowDefinition& flow, Store& store, InFlight& in_flight,
         TaskRunner& runner, Reporter& reporter, Executor& executor, const Clock& clock,
         const Logger& log, MetricSink metric, std::function<void(absl::Status)> stop_worker);

  // Claims and hands out tasks until `stop`, then gives back claims whose reply was lost.
  void run(const std::stop_token& stop);

 private:
  void claim_until_stopped(const std::stop_token& stop);
  // One read-and-claim of up to `slots` messages; the number of messages it read.
  absl::StatusOr<int> claim(int slots, const std::stop_token& stop);
  // Poll-only, after a read that found nothing: whether the queue now holds work, by a look
  // (has_visible_work: about a quarter of an empty claim's server CPU). True when the look
  // failed (the claim reports or retries it) or the database cannot look (then never again).
  bool worth_claiming(const std::stop_token& stop);
  // A claimed message becomes a task in flight on a handler thread.
  void hand_out(ClaimedMessage message, Clock::WallTime claimed_at_wall, Clock::Time claimed_at);

  PollerConfig config_;
  const FlowDefinition& flow_;
  Store& store_;
  InFlight& in_flight_;
  TaskRunner& runner_;
  Reporter& reporter_;
  Executor& executor_;
  const Clock& clock_;
  const Logger& log_;
  MetricSink metric_;
  std::function<void(absl::Status)> stop_worker_;
  bool can_look_ = true;  // the database has has_visible_work
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_POLLER_H_
