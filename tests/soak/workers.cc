#include "workers.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"

namespace pgflow::soak {

namespace {

std::string describe_exit(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exit ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("signal ", WTERMSIG(status));
  return absl::StrCat("status ", status);
}

}  // namespace

std::optional<std::int64_t> rss_kib(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    if (!line.starts_with("VmRSS:")) continue;
    std::vector<std::string> parts = absl::StrSplit(line, ' ', absl::SkipWhitespace());
    std::int64_t kib = 0;
    if (parts.size() >= 2 && absl::SimpleAtoi(parts[1], &kib)) return kib;
  }
  return std::nullopt;
}

WorkerPool::WorkerPool(Options options)
    : options_(std::move(options)), slots_(static_cast<size_t>(options_.slots)) {}

WorkerPool::~WorkerPool() {
  for (Slot& s : slots_) {
    if (s.pid > 0) {
      kill(s.pid, SIGKILL);
      waitpid(s.pid, nullptr, 0);
    }
  }
}

absl::Status WorkerPool::spawn_all() {
  for (int i = 0; i < options_.slots; ++i) {
    if (absl::Status s = spawn(i); !s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status WorkerPool::spawn(int slot) {
  const std::string log_path = absl::StrCat(options_.dir, "/worker-", slot, ".log");
  const int log = open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log < 0)
    return absl::InternalError(absl::StrCat("cannot open ", log_path, ": ", std::strerror(errno)));
  // Everything the child needs is built before fork: after it, only async-signal-safe calls.
  const std::string concurrency = std::to_string(options_.max_concurrent);
  std::vector<std::string> args = {options_.binary, options_.url, options_.dir, concurrency};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log);
    return absl::InternalError(absl::StrCat("fork: ", std::strerror(errno)));
  }
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127);  // the driver died before prctl
    dup2(log, 1);
    dup2(log, 2);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(log);
  Slot& s = slots_[static_cast<size_t>(slot)];
  s.pid = pid;
  s.ready_rss.reset();
  ++s.generation;
  return absl::OkStatus();
}

pid_t WorkerPool::kill_and_respawn(int slot) {
  Slot& s = slots_[static_cast<size_t>(slot)];
  const pid_t victim = s.pid;
  kill(victim, SIGKILL);
  waitpid(victim, nullptr, 0);
  killed_.insert(victim);
  s.pid = -1;
  ++respawns_;
  if (absl::Status spawned = spawn(slot); !spawned.ok()) {
    std::fprintf(stderr, "pgflow_soak: respawning worker %d: %s\n", slot,
                 spawned.ToString().c_str());
  }
  return victim;
}

std::vector<std::string> WorkerPool::poll() {
  std::vector<std::string> exits;
  for (int i = 0; i < options_.slots; ++i) {
    Slot& s = slots_[static_cast<size_t>(i)];
    if (s.pid <= 0) continue;
    int status = 0;
    if (waitpid(s.pid, &status, WNOHANG) == s.pid) {
      exits.push_back(absl::StrCat("worker ", i, " (pid ", s.pid, ") ", describe_exit(status),
                                   " by itself; see worker-", i, ".log"));
      s.pid = -1;
      ++respawns_;
      if (absl::Status spawned = spawn(i); !spawned.ok()) exits.push_back(spawned.ToString());
      continue;
    }
    if (!s.ready_rss && std::filesystem::exists(absl::StrCat(options_.dir, "/ready.", s.pid))) {
      s.ready_rss = rss_kib(s.pid);
    }
  }
  return exits;
}

std::vector<std::string> WorkerPool::stop_all(std::chrono::seconds grace) {
  std::vector<std::string> problems;
  for (const Slot& s : slots_) {
    if (s.pid > 0) kill(s.pid, SIGTERM);
  }
  const auto deadline = std::chrono::steady_clock::now() + grace;
  for (size_t i = 0; i < slots_.size(); ++i) {
    Slot& s = slots_[i];
    if (s.pid <= 0) continue;
    int status = 0;
    pid_t done = 0;
    while ((done = waitpid(s.pid, &status, WNOHANG)) == 0 &&
           std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    if (done == 0) {
      kill(s.pid, SIGKILL);
      waitpid(s.pid, &status, 0);
      problems.push_back(absl::StrCat("worker ", i, " (pid ", s.pid, ") did not stop within ",
                                      grace.count(), " s of SIGTERM (killed)"));
    } else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
      problems.push_back(
          absl::StrCat("worker ", i, " (pid ", s.pid, ") stopped with ", describe_exit(status)));
    }
    s.pid = -1;
  }
  return problems;
}

}  // namespace pgflow::soak
