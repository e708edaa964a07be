#include "load/worker_process.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string_view>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "load/support.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"

extern char** environ;

namespace pgflow::bench {

FlowDefinition probe_flow(std::string slug, std::function<void(int)> on_start) {
  return renamed(Flow<"benchFleetProbe", int>().step<"work">([on_start](int i) {
    on_start(i);
    return i;
  }),
                 std::move(slug));
}

namespace {

std::int64_t steady_micros() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

// Lines to the benchmark, whole (several threads write).
std::mutex out_mu;
void say(const std::string& line) {
  std::lock_guard<std::mutex> lock(out_mu);
  std::fputs((line + "\n").c_str(), stdout);
  std::fflush(stdout);
}

}  // namespace

int worker_process_main(int argc, char** argv) {
  int poll_interval_ms = 0;
  if (argc < 5 || argc > 6 || !absl::SimpleAtoi(argv[3], &poll_interval_ms)) {
    std::fprintf(stderr,
                 "usage: pgflow_bench --worker-process work|probe SLUG POLL_ONLY(0|1) "
                 "POLL_INTERVAL_MS(0: default) URL [LISTEN_URL]\n");
    return 2;
  }
  const std::string_view kind = argv[0];
  const FlowDefinition flow =
      kind == "probe"
          ? probe_flow(argv[1], [](int i) { say(absl::StrCat("start ", i, " ", steady_micros())); })
          : one_step_flow(argv[1]);
  TaskCounter counter;  // no target: it only counts
  // The reporting thread sleeps until a count changes (an idle worker's process must not be
  // kept busy by its reports), then reports at most every 10 ms.
  std::mutex mu;
  std::condition_variable changed_cv;
  bool changed = false, done = false;
  auto note_change = [&] {
    {
      std::lock_guard<std::mutex> lock(mu);
      changed = true;
    }
    changed_cv.notify_one();
  };
  WorkerConfig c;
  c.connection_string = argv[4];
  if (argc == 6) c.listen_connection_string = argv[5];
  c.poll_only = std::string_view(argv[2]) == "1";
  if (poll_interval_ms > 0) c.poll_interval = std::chrono::milliseconds(poll_interval_ms);
  c.max_concurrent = 10;
  c.batch_size = 10;
  c.report_batch_size = 64;
  c.log_level = LogLevel::kWarn;
  c.metrics = [&, count = counter.callback()](const WorkerMetric& m) {
    count(m);
    note_change();
  };
  absl::StatusOr<EdgeWorker> worker = EdgeWorker::start(flow, c);
  if (!worker.ok()) {
    std::fprintf(stderr, "worker process: %s\n", std::string(worker.status().message()).c_str());
    return 1;
  }
  say("ready");
  auto counts = [&] {
    return absl::StrCat("counts ", counter.completed(), " ", counter.claim_calls(), " ",
                        counter.looks());
  };
  std::thread reporter([&] {
    std::string last;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mu);
        changed_cv.wait(lock, [&] { return changed || done; });
        if (done) return;
        changed = false;
      }
      if (std::string now = counts(); now != last) say(last = now);
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  });
  while (std::fgetc(stdin) != EOF) {
  }
  worker->stop();
  const absl::Status why = worker->wait();
  {
    std::lock_guard<std::mutex> lock(mu);
    done = true;
  }
  changed_cv.notify_one();
  reporter.join();
  say(counts());
  if (!why.ok()) {
    std::fprintf(stderr, "worker process: %s\n", std::string(why.message()).c_str());
    return 1;
  }
  return 0;
}

WorkerProcess::WorkerProcess(const WorkerProcessConfig& config,
                             std::function<void(int, std::int64_t)> on_start)
    : on_start_(std::move(on_start)) {
  std::vector<std::string> args = {"pgflow_bench",
                                   "--worker-process",
                                   config.flow == FleetFlow::kProbe ? "probe" : "work",
                                   config.slug,
                                   config.poll_only ? "1" : "0",
                                   std::to_string(config.poll_interval_ms),
                                   config.connection_string};
  if (!config.listen_connection_string.empty()) args.push_back(config.listen_connection_string);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0)
    throw BenchError("worker process: pipe failed");
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, in[0], 0);
  posix_spawn_file_actions_adddup2(&actions, out[1], 1);
  // The benchmark blocks SIGINT/SIGTERM for its signal thread; the worker gets them back (it
  // stops on a closed stdin anyway).
  posix_spawnattr_t attr;
  posix_spawnattr_init(&attr);
  sigset_t none;
  sigemptyset(&none);
  posix_spawnattr_setsigmask(&attr, &none);
  posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK);
  const int rc = posix_spawn(&pid_, "/proc/self/exe", &actions, &attr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attr);
  close(in[0]);
  close(out[1]);
  stdin_fd_ = in[1];
  stdout_fd_ = out[0];
  if (rc != 0) {
    close(stdin_fd_);
    close(stdout_fd_);
    throw BenchError(absl::StrCat("worker process: posix_spawn failed (", rc, ")"));
  }
  reader_ = std::thread([this] { read_lines(); });
}

WorkerProcess::~WorkerProcess() { (void)stop(); }

void WorkerProcess::read_lines() {
  std::string pending;
  char buf[4096];
  for (;;) {
    const ssize_t n = read(stdout_fd_, buf, sizeof buf);
    if (n <= 0) break;
    pending.append(buf, static_cast<size_t>(n));
    for (size_t nl; (nl = pending.find('\n')) != std::string::npos; pending.erase(0, nl + 1)) {
      const std::string line = pending.substr(0, nl);
      long long a = 0, b = 0, c = 0;  // NOLINT(runtime/int): sscanf's %lld
      if (line == "ready") {
        ready_ = true;
      } else if (std::sscanf(line.c_str(), "counts %lld %lld %lld", &a, &b, &c) == 3) {
        completed_ = a;
        claims_ = b;
        looks_ = c;
      } else if (std::sscanf(line.c_str(), "start %lld %lld", &a, &b) == 2 && on_start_) {
        on_start_(static_cast<int>(a), b);
      }
    }
  }
  eof_ = true;
}

double WorkerProcess::cpu_seconds() const {
  if (eof_.load()) return 0;
  return cpu_seconds_of_pid(pid_).value_or(0);
}

bool WorkerProcess::stop() {
  if (stopped_) return ok_;
  stopped_ = true;
  close(stdin_fd_);
  if (reader_.joinable()) reader_.join();
  close(stdout_fd_);
  int status = 0;
  ok_ = waitpid(pid_, &status, 0) == pid_ && WIFEXITED(status) && WEXITSTATUS(status) == 0;
  return ok_;
}

Fleet::Fleet(const WorkerProcessConfig& config, int n,
             std::function<void(int, std::int64_t)> on_start) {
  for (int i = 0; i < n; ++i)
    processes_.push_back(std::make_unique<WorkerProcess>(config, on_start));
}

void Fleet::wait_ready(std::chrono::milliseconds timeout) const {
  const auto deadline = Clock::now() + timeout;
  for (const auto& p : processes_) {
    while (!p->ready()) {
      if (p->exited()) throw BenchError("p: a worker process exited before its worker started");
      if (Clock::now() > deadline) throw BenchError("p: a worker process did not start in time");
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  }
}

std::int64_t Fleet::completed() const {
  std::int64_t n = 0;
  for (const auto& p : processes_) n += p->completed();
  return n;
}

std::int64_t Fleet::claim_calls() const {
  std::int64_t n = 0;
  for (const auto& p : processes_) n += p->claim_calls();
  return n;
}

std::int64_t Fleet::looks() const {
  std::int64_t n = 0;
  for (const auto& p : processes_) n += p->looks();
  return n;
}

double Fleet::cpu_seconds() const {
  double s = 0;
  for (const auto& p : processes_) s += p->cpu_seconds();
  return s;
}

void Fleet::stop() {
  // All stdins first: the workers stop together rather than one after another.
  std::vector<std::thread> stoppers;
  std::atomic<int> failed{0};
  for (auto& p : processes_)
    stoppers.emplace_back([&p, &failed] {
      if (!p->stop()) ++failed;
    });
  for (std::thread& t : stoppers) t.join();
  if (failed > 0)
    throw BenchError(
        absl::StrCat("p: ", failed.load(), " worker process(es) did not stop cleanly"));
}

}  // namespace pgflow::bench
