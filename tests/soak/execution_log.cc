#include "execution_log.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace pgflow::soak {

absl::StatusOr<ExecutionWriter> ExecutionWriter::open(const std::string& dir) {
  const std::string path = absl::StrCat(dir, "/executions.", getpid(), ".log");
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (fd < 0)
    return absl::InternalError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  return ExecutionWriter(fd);
}

ExecutionWriter::~ExecutionWriter() {
  if (fd_ >= 0) ::close(fd_);
}

void ExecutionWriter::record(const pgflow::Context& ctx, char event) const {
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  const std::string line = absl::StrFormat(
      "%c %s %s %d %d %d %d\n", event, ctx.run_id(), ctx.step_slug(), ctx.task_index(),
      ctx.attempt(), getpid(), std::chrono::duration_cast<std::chrono::microseconds>(now).count());
  // A short write of a few dozen bytes to a local file does not happen; a failed one would
  // show up as a task completed without an execution (the driver checks).
  [[maybe_unused]] const ssize_t written = ::write(fd_, line.data(), line.size());
}

absl::StatusOr<ExecutionsByTask> read_executions(const std::string& dir) {
  ExecutionsByTask by_task;
  struct Failure {
    TaskKey key;
    int attempt;
    pid_t pid;
  };
  std::vector<Failure> failures;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("executions.") || !name.ends_with(".log")) continue;
    std::ifstream in(entry.path());
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      std::istringstream fields(line);
      char event = 0;
      TaskKey key;
      Execution e;
      if (!(fields >> event >> key.run_id >> key.step >> key.task_index >> e.attempt >> e.pid >>
            e.unix_us) ||
          (event != 'S' && event != 'F')) {
        return absl::DataLossError(
            absl::StrCat(entry.path().string(), ":", number, ": malformed line: ", line));
      }
      if (event == 'S') {
        by_task[key].push_back(e);
      } else {
        failures.push_back({key, e.attempt, e.pid});
      }
    }
  }
  for (auto& [key, list] : by_task) {
    std::sort(list.begin(), list.end(),
              [](const Execution& a, const Execution& b) { return a.unix_us < b.unix_us; });
  }
  for (const Failure& f : failures) {
    auto it = by_task.find(f.key);
    if (it == by_task.end()) continue;
    for (Execution& e : it->second) {
      if (e.pid == f.pid && e.attempt == f.attempt) e.failed = true;
    }
  }
  return by_task;
}

DuplicateStats count_duplicates(const ExecutionsByTask& executions, const std::set<pid_t>& killed) {
  DuplicateStats stats;
  for (const auto& [key, list] : executions) {
    ++stats.tasks;
    stats.executions += static_cast<std::int64_t>(list.size());
    stats.max_per_task = std::max(stats.max_per_task, static_cast<int>(list.size()));
    for (std::size_t i = 0; i < list.size(); ++i) {
      if (list[i].failed) ++stats.failed;
      if (i == 0) continue;
      const Execution& previous = list[i - 1];
      if (previous.failed) continue;  // a retry after an error, not a duplicate
      ++stats.duplicates;
      if (killed.contains(previous.pid)) {
        ++stats.after_kill;
      } else {
        ++stats.unexplained;
        if (stats.unexplained_samples.size() < 10) {
          stats.unexplained_samples.push_back(absl::StrFormat(
              "%s/%s[%d]: attempt %d in pid %d, then attempt %d in pid %d %.3f s later", key.run_id,
              key.step, key.task_index, previous.attempt, previous.pid, list[i].attempt,
              list[i].pid, static_cast<double>(list[i].unix_us - previous.unix_us) / 1e6));
        }
      }
    }
  }
  return stats;
}

}  // namespace pgflow::soak
