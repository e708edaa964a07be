// A fixed pool of threads running submitted jobs in order of submission.
#ifndef PGFLOW_WORKER_EXECUTOR_H_
#define PGFLOW_WORKER_EXECUTOR_H_

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace pgflow::internal {

class Executor {
 public:
  explicit Executor(int threads);
  // Closes the pool and joins every thread after the queued jobs ran.
  ~Executor();

  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  void submit(std::function<void()> job);

 private:
  void loop();

  std::mutex mu_;
  std::condition_variable ready_;
  std::deque<std::function<void()>> jobs_;
  bool closed_ = false;
  std::vector<std::jthread> threads_;
};

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_EXECUTOR_H_
