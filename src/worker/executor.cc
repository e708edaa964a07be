#include "worker/executor.h"

#include <utility>

namespace pgflow::internal {

Executor::Executor(int threads) {
  threads_.reserve(static_cast<size_t>(threads));
  for (int i = 0; i < threads; ++i) threads_.emplace_back([this] { loop(); });
}

Executor::~Executor() {
  {
    absl::MutexLock lock(&mu_);
    closed_ = true;
  }
  ready_.SignalAll();
  threads_.clear();  // joins
}

void Executor::submit(std::function<void()> job) {
  {
    absl::MutexLock lock(&mu_);
    jobs_.push_back(std::move(job));
  }
  ready_.Signal();
}

void Executor::loop() {
  while (true) {
    std::function<void()> job;
    {
      absl::MutexLock lock(&mu_);
      while (!job_or_closed()) ready_.Wait(&mu_);
      if (jobs_.empty()) return;  // closed and drained
      job = std::move(jobs_.front());
      jobs_.pop_front();
    }
    job();
  }
}

}  // namespace pgflow::internal
