// pgflow::EdgeWorker (pgflow/worker.h): the public handle of an internal::Worker on PostgreSQL
// and the real clock, and run()'s wait for SIGTERM / SIGINT.
#include <signal.h>

#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "internal/strings.h"
#include "pgflow/worker.h"
#include "worker/config.h"
#include "worker/store_connections.h"
#include "worker/worker.h"

namespace pgflow {

class EdgeWorker::Impl : public internal::Worker {
 public:
  using internal::Worker::Worker;
};

EdgeWorker::EdgeWorker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
EdgeWorker::EdgeWorker(EdgeWorker&&) noexcept = default;
EdgeWorker& EdgeWorker::operator=(EdgeWorker&&) noexcept = default;
EdgeWorker::~EdgeWorker() = default;

absl::Status EdgeWorker::select_step(WorkerConfig& config, std::string_view step) {
  if (!config.step.empty() && config.step != step) {
    return absl::InvalidArgumentError(absl::StrCat("invalid WorkerConfig: step is \"", config.step,
                                                   "\" but only_step selects \"",
                                                   internal::absl_view(step), "\""));
  }
  config.step = std::string(step);
  return absl::OkStatus();
}

absl::StatusOr<EdgeWorker> EdgeWorker::start(const FlowDefinition& flow, WorkerConfig config) {
  // A worker that does not start says why in its log too: a deployment's main() may only
  // return the status.
  const Logger log(config.log_sink ? config.log_sink : stderr_log_sink(), config.log_level,
                   {{"flow", flow.slug}});
  absl::StatusOr<EdgeWorker> worker = [&]() -> absl::StatusOr<EdgeWorker> {
    // Everything that can be checked without the database, before touching it.
    PGFLOW_RETURN_IF_ERROR(internal::complete_and_check(config, flow));
    PGFLOW_RETURN_IF_ERROR(validate(flow));
    PGFLOW_ASSIGN_OR_RETURN(std::vector<StepRoute> routes, routes_of(flow));
    internal::StoreFactory stores = internal::pg_stores(internal::store_connections(config));
    auto impl = std::make_unique<Impl>(flow, std::move(config), std::move(routes), stores,
                                       internal::system_clock());
    PGFLOW_RETURN_IF_ERROR(impl->start());
    return EdgeWorker(std::move(impl));
  }();
  if (!worker.ok())
    log.error("worker did not start", {{"error", std::string(worker.status().message())}});
  return worker;
}

void EdgeWorker::stop() { impl_->request_stop(absl::OkStatus()); }
absl::Status EdgeWorker::wait() { return impl_->wait(); }
bool EdgeWorker::running() const { return impl_->running(); }
const std::string& EdgeWorker::worker_id() const { return impl_->worker_id(); }

absl::Status EdgeWorker::run(const FlowDefinition& flow, WorkerConfig config) {
  // Block SIGINT/SIGTERM before any worker thread exists, so they all inherit the mask and
  // only sigtimedwait below receives the signals.
  sigset_t signals, previous;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, &previous);
  absl::Status result = [&]() -> absl::Status {
    PGFLOW_ASSIGN_OR_RETURN(EdgeWorker worker, start(flow, std::move(config)));
    const timespec tick{0, 200'000'000};  // also notice a worker that stopped by itself
    while (worker.running()) {
      siginfo_t info;
      if (sigtimedwait(&signals, &info, &tick) > 0) {
        worker.stop();
        break;
      }
    }
    return worker.wait();
  }();
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  return result;
}

}  // namespace pgflow
