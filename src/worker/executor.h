// A fixed pool of threads running submitted jobs in order of submission. Thread-safe: mu_
// guards the job queue and the closed flag; jobs run without it.
#ifndef PGFLOW_WORKER_EXECUTOR_H_
#define PGFLOW_WORKER_EXECUTOR_H_

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"

namespace pgflow::internal {

class Executor {
 public:
  explicit Executor(int threads);
  // Closes the pool and joins every thread after the queued jobs ran.
  ~Executor();

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void submit(std::function<void()> job) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  void loop() ABSL_LOCKS_EXCLUDED(mu_);
  bool job_or_closed() const ABSL_SHARED_LOCKS_REQUIRED(mu_) { return closed_ || !jobs_.empty(); }

  absl::Mutex mu_;       // jobs_ and closed_
  absl::CondVar ready_;  // signalled for each job and at the close
  std::deque<std::function<void()>> jobs_ ABSL_GUARDED_BY(mu_);
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::jthread> threads_;  // set in the constructor, joined in the destructor
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_EXECUTOR_H_
