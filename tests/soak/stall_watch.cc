#include "stall_watch.h"

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "pg/connection.h"

namespace pgflow::soak {

namespace {

// Worker id -> whether its process is alive, from DIR/worker-id.<pid>.
std::map<std::string, bool> worker_processes(const std::string& dir) {
  std::map<std::string, bool> out;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(dir, ec)) {
    const std::string name = entry.path().filename().string();
    int pid = 0;
    if (!absl::StartsWith(name, "worker-id.") ||
        !absl::SimpleAtoi(name.substr(std::string("worker-id.").size()), &pid)) {
      continue;
    }
    std::string id;
    std::ifstream(entry.path()) >> id;
    // (A killed worker is reaped at once, so a pid that answers belongs to a live process.)
    if (!id.empty()) out[id] = kill(pid, 0) == 0;
  }
  return out;
}

}  // namespace

StallWatch::StallWatch(std::string url, std::string dir)
    : url_(std::move(url)), dir_(std::move(dir)), thread_([this] { watch(); }) {}

StallWatch::~StallWatch() {
  stopping_ = true;
  thread_.join();
}

std::set<std::string> StallWatch::stalled_under_live_workers() const {
  std::lock_guard<std::mutex> lock(mu_);
  return found_;
}

void StallWatch::watch() {
  while (!stopping_) {
    look_once();
    for (int i = 0; i < 10 && !stopping_; ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
}

void StallWatch::look_once() {
  // (A fresh connection each time: the server restarts under the soak.)
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(url_, "pgflow-soak-stall-watch");
  if (!conn.ok()) return;
  absl::StatusOr<pg::Result> tasks = conn->exec(
      "select t.run_id::text, t.step_slug, t.task_index, t.attempts_count, t.last_worker_id::text "
      "from pgflow.step_tasks t "
      "where t.status = 'started' and t.started_at < now() - interval '20 seconds' "
      "  and t.last_worker_id is not null");
  if (!tasks.ok() || tasks->rows() == 0) return;
  const std::map<std::string, bool> alive = worker_processes(dir_);
  std::lock_guard<std::mutex> lock(mu_);
  for (int i = 0; i < tasks->rows(); ++i) {
    const std::string worker(tasks->text(i, 4));
    const auto it = alive.find(worker);
    if (it == alive.end() || !it->second) continue;
    found_.insert(absl::StrCat(std::string(tasks->text(i, 0)), " ", std::string(tasks->text(i, 1)),
                               "#", std::string(tasks->text(i, 2)), " attempt ",
                               std::string(tasks->text(i, 3)), ", worker ", worker));
  }
}

std::int64_t deadlocks_in_log(const std::string& server_log) {
  std::ifstream in(server_log);
  std::int64_t n = 0;
  for (std::string line; std::getline(in, line);) {
    if (line.find("deadlock detected") != std::string::npos) ++n;
  }
  return n;
}

}  // namespace pgflow::soak
