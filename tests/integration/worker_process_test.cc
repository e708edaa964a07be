// Workers as separate processes: signals, crashes, and a PostgreSQL restart.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/client.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"
#include "testing/child_flow.h"
#include "testing/database_test.h"
#include "testing/limited_flow.h"
#include "testing/pg_fixture.h"
#include "testing/split_flow.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

extern char** environ;

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::LogRecorder;
using pgflow::testing::query_text;
using pgflow::testing::start_run;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::TestDatabase;
using pgflow::testing::wait_for_run;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;

// A worker process: the wChild flow (handler sleeps `n` ms), or step `step` of the step-queued
// wSplit flow (map elements from `n` on are held until the worker stops).
class ChildWorker {
 public:
  ChildWorker(const std::string& url, int n, std::string step = "")
      : ChildWorker(url, n, step.empty() ? std::vector<std::string>{} : std::vector{step}) {}
  // A worker of the wLimited flow (handler sleeps `sleep_ms`, logs to `log`).
  static std::unique_ptr<ChildWorker> limited(const std::string& url, int sleep_ms,
                                              const std::string& log) {
    return std::unique_ptr<ChildWorker>(
        new ChildWorker(url, sleep_ms, std::vector<std::string>{"--limited", log}));
  }
  ~ChildWorker() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool spawned() const { return spawned_; }
  void signal(int sig) { kill(pid_, sig); }
  pid_t pid() const { return pid_; }
  // Waits for the process to end; its exit code, or -signal when killed.
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  ChildWorker(const std::string& url, int n, std::vector<std::string> extra) {
    std::string arg = std::to_string(n);
    std::string bin = PGFLOW_TEST_WORKER_BIN;
    std::vector<char*> argv = {bin.data(), const_cast<char*>(url.c_str()), arg.data()};
    for (std::string& e : extra) argv.push_back(e.data());
    argv.push_back(nullptr);
    spawned_ = posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv.data(), environ) == 0;
  }

  pid_t pid_ = -1;
  bool spawned_ = false;
  bool reaped_ = false;
};

class WorkerProcessTest : public pgflow::testing::DatabaseTest {
 protected:
  // Waits until a wChild worker is registered and a task of `run_id` is started.
  void wait_worker_registered() {
    ASSERT_THAT(wait_until(*conn_,
                           "select exists (select 1 from pgflow.workers "
                           "where function_name = 'wChild-worker' and stopped_at is null)"),
                IsOk());
  }
  std::string sql(const std::string& q, const std::vector<pg::Param>& p = {}) {
    auto r = query_text(*conn_, q, p);
    EXPECT_THAT(r, IsOk()) << q;
    return r.ok() ? *r : "";
  }
};

TEST_F(WorkerProcessTest, SigtermDuringALongHandlerLetsItFinishAndReport) {
  ChildWorker child(db_->url(), 1500);
  ASSERT_TRUE(child.spawned());
  wait_worker_registered();
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wChild", 41));
  ASSERT_THAT(
      wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                 {run_id}),
      IsOk());
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 0);
  // Reported before the process exited: no waiting needed.
  EXPECT_EQ(
      sql("select status || '/' || attempts_count from pgflow.step_tasks where run_id = $1::uuid",
          {run_id}),
      "completed/1");
  EXPECT_EQ(sql("select output::text from pgflow.runs where run_id = $1::uuid", {run_id}),
            "{\"work\": 42}");
  EXPECT_EQ(sql("select bool_and(stopped_at is not null) from pgflow.workers"), "t");
}

TEST_F(WorkerProcessTest, AnotherWorkerFinishesTheRunOfAKilledWorker) {
  ChildWorker child(db_->url(), 600000);
  ASSERT_TRUE(child.spawned());
  wait_worker_registered();
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(*conn_, "wChild", 1));
  ASSERT_THAT(
      wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                 {run_id}),
      IsOk());
  child.signal(SIGKILL);
  EXPECT_EQ(child.wait(), -SIGKILL);
  // Short timeouts for the test: the task looks stalled (started long ago) right away.
  ASSERT_EQ(sql("update pgflow.step_tasks set queued_at = now() - interval '2 hours', "
                "started_at = now() - interval '1 hour' where run_id = $1::uuid returning 't'",
                {run_id}),
            "t");
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      EdgeWorker rescuer,
      EdgeWorker::start(pgflow::testing::child_flow(0), test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run, wait_for_run(*conn_, run_id));
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"work", 2}}));
  EXPECT_EQ(sql("select attempts_count || '/' || requeued_count from pgflow.step_tasks where "
                "run_id = $1::uuid",
                {run_id}),
            "2/1");
}

// A flow with one queue per step: the map step's workers (child processes) are killed in the
// middle of a 5,000-element map. The other steps' workers (in this process, one per step) keep
// completing the runs that do not need the map, whose tasks never queue behind the map's; the
// map resumes where it stopped once its workers are back, and every element is done once.
TEST_F(WorkerProcessTest, KillingAMapStepsWorkersLeavesTheOtherStepsRunning) {
  constexpr int kElements = 5000;
  constexpr int kHoldFrom = 1000;  // the first workers finish at most elements 0..999
  const std::string url = db_->url();
  auto flow = pgflow::testing::split_flow(/*hold_from=*/-1);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker plan,
                              EdgeWorker::start(flow, only_step<"plan">, test_worker_config(url)));
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      EdgeWorker summary, EdgeWorker::start(flow, only_step<"summary">, test_worker_config(url)));
  auto map_a = std::make_unique<ChildWorker>(url, kHoldFrom, "each");
  auto map_b = std::make_unique<ChildWorker>(url, kHoldFrom, "each");
  ASSERT_TRUE(map_a->spawned() && map_b->spawned());
  const std::string live_map_workers =
      "select count(*) = 2 from pgflow.workers where queue_name = 'wsplit__each' "
      "and function_name = 'wSplit-each-worker' and stopped_at is null";
  ASSERT_THAT(wait_until(*conn_, live_map_workers), IsOk());
  const std::string killed_workers =
      sql("select string_agg(worker_id::text, ',') from pgflow.workers where queue_name = "
          "'wsplit__each'");

  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string big, start_run(*conn_, "wSplit", kElements));
  const std::string done_elements =
      absl::StrCat("select count(*) from pgflow.step_tasks where run_id = '", big,
                   "' and step_slug = 'each' "
                   "and status = 'completed'");
  ASSERT_THAT(wait_until(*conn_, absl::StrCat("select (", done_elements, ") >= 200")), IsOk());
  map_a->signal(SIGKILL);
  map_b->signal(SIGKILL);
  EXPECT_EQ(map_a->wait(), -SIGKILL);
  EXPECT_EQ(map_b->wait(), -SIGKILL);
  // A statement a killed process sent may still be running on its server backend; once those
  // backends are gone (only this process's two workers are left), nothing changes the map.
  ASSERT_THAT(
      wait_until(*conn_,
                 "select count(*) = 2 from pg_stat_activity where datname = current_database() "
                 "and application_name = 'pgflow-worker-reporter'"),
      IsOk());
  const int done_before = std::stoi(sql(done_elements));
  EXPECT_LE(done_before, kHoldFrom);
  EXPECT_EQ(
      sql("select count(*) from pgflow.step_tasks where run_id = $1::uuid and step_slug = 'each'",
          {big}),
      std::to_string(kElements));

  // No map worker now, thousands of map messages waiting: runs that need no map still finish.
  std::vector<std::string> small;
  for (int i = 0; i < 5; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run, start_run(*conn_, "wSplit", 0));
    small.push_back(run);
  }
  for (const std::string& run : small) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(json state, wait_for_run(*conn_, run));
    EXPECT_EQ(state["run"]["status"], "completed");
    EXPECT_EQ(state["run"]["output"], json({{"each", json::array()}, {"summary", 0}}));
  }
  EXPECT_EQ(sql(done_elements), std::to_string(done_before)) << "nothing served the map meanwhile";
  EXPECT_EQ(sql("select status from pgflow.runs where run_id = $1::uuid", {big}), "started");

  // The map's workers come back. The tasks the killed ones had claimed look stalled at once
  // (the test moves their start back instead of waiting out timeout + 30 s), so stall
  // recovery, run by any live worker, requeues them.
  ChildWorker map_c(url, -1, "each");
  ChildWorker map_d(url, -1, "each");
  ASSERT_TRUE(map_c.spawned() && map_d.spawned());
  sql("update pgflow.step_tasks set queued_at = now() - interval '2 hours', "
      "started_at = now() - interval '1 hour' where run_id = '" +
      big +
      "' and status = 'started' "
      "and last_worker_id = any(string_to_array('" +
      killed_workers + "', ',')::uuid[]) returning 1");
  PGFLOW_ASSERT_OK_AND_ASSIGN(json done, wait_for_run(*conn_, big, std::chrono::seconds(240)));
  EXPECT_EQ(done["run"]["status"], "completed");
  json expected = json::array();
  for (int i = 0; i < kElements; ++i) expected.push_back(2 * i);
  EXPECT_EQ(done["run"]["output"]["each"], expected);
  EXPECT_EQ(done["run"]["output"]["summary"], kElements);
  EXPECT_EQ(
      sql("select count(*) from pgflow.step_tasks where run_id = $1::uuid and step_slug = 'each' "
          "and status = 'completed'",
          {big}),
      std::to_string(kElements));
  EXPECT_EQ(
      sql("select string_agg(distinct queue_name, ',' order by queue_name) from pgflow.step_tasks "
          "where run_id = $1::uuid",
          {big}),
      "wsplit__each,wsplit__plan,wsplit__summary");
}

// A cluster of its own, so restarting it disturbs no other test.
class OwnCluster {
 public:
  OwnCluster() : dir_(absl::StrCat("/tmp/pgflow-restart-test-", getpid())) {}
  ~OwnCluster() { run("remove"); }
  bool start() { return run("start") == 0; }
  bool stop() { return run("stop") == 0; }
  std::string url() const {
    std::ifstream in(dir_ + "/url");
    std::string u;
    std::getline(in, u);
    return u;
  }

 private:
  int run(const char* command) const {
    std::string cmd =
        absl::StrCat(PGFLOW_SOURCE_DIR, "/scripts/pgcluster ", command, " ", dir_,
                     std::string_view(command) == "start" ? " --fast" : "", " >/dev/null");
    return std::system(cmd.c_str());
  }
  std::string dir_;
};

TEST(WorkerRestartTest, APostgresRestartMidRunLosesNothing) {
  OwnCluster cluster;
  ASSERT_TRUE(cluster.start());
  const std::string url = cluster.url();
  ASSERT_THAT(migrate(url), IsOk());

  std::atomic<bool> release{false};
  std::atomic<int> calls{0};
  auto flow = Flow<"wRestart", int>().step<"hold">([&](int x) {
    ++calls;
    while (!release.load()) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    return x * 3;
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, test_worker_config(url)));
  std::string run_id;
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(url));
    PGFLOW_ASSERT_OK_AND_ASSIGN(run_id, start_run(conn, "wRestart", 5));
    ASSERT_THAT(
        wait_until(conn, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                   {run_id}),
        IsOk());
  }
  // The server goes away while the handler works; its result is computed during the outage.
  ASSERT_TRUE(cluster.stop());
  release = true;
  // Some time for the result to meet the outage; nothing below depends on how long (a result
  // first reported after the restart must give the same end state).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  ASSERT_TRUE(cluster.start());
  ASSERT_EQ(cluster.url(), url) << "the cluster came back on another port";

  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(url));
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run, wait_for_run(conn, run_id));
  EXPECT_EQ(run["run"]["status"], "completed");
  EXPECT_EQ(run["run"]["output"], json({{"hold", 15}}));
  EXPECT_EQ(calls.load(), 1);
  // And the worker polls again: a new run goes through.
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string second, start_run(conn, "wRestart", 2));
  PGFLOW_ASSERT_OK_AND_ASSIGN(json run2, wait_for_run(conn, second));
  EXPECT_EQ(run2["run"]["output"], json({{"hold", 6}}));
  EXPECT_TRUE(worker.running());
}

TEST(WorkerRestartTest, StopsWhileTheDatabaseIsDown) {
  OwnCluster cluster;
  ASSERT_TRUE(cluster.start());
  const std::string url = cluster.url();
  ASSERT_THAT(migrate(url), IsOk());
  std::atomic<bool> ran{false};
  auto flow = Flow<"wOutage", int>().step<"quick">([&](int x) {
    ran = true;
    return x;
  });
  LogRecorder logs;
  WorkerConfig config = test_worker_config(url, &logs);
  config.stop_grace_period = std::chrono::seconds(1);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config));
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(url));
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(conn, "wOutage", 1));
    ASSERT_THAT(wait_for_run(conn, run_id), IsOk());
  }
  ASSERT_TRUE(cluster.stop());
  // The worker's calls now fail and are retried against the dead server (the heartbeat runs
  // every 200 ms); a stop must still finish.
  ASSERT_TRUE(logs.wait_for_text("database call failed; retrying"));
  // The server never comes back: wait() returning at all is the property (a stop that waited
  // for the database would hang until ctest's timeout).
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(ran.load());
}

// A worker (or client) started while PostgreSQL is down waits for it, within its startup
// timeout, instead of exiting: a worker restarted during a database restart or failover.
TEST(WorkerRestartTest, AWorkerAndAClientStartedWhileTheDatabaseIsDownStartOnceItIsBack) {
  OwnCluster cluster;
  ASSERT_TRUE(cluster.start());
  const std::string url = cluster.url();
  ASSERT_THAT(migrate(url), IsOk());
  ASSERT_TRUE(cluster.stop());

  auto flow = Flow<"wLateDatabase", int>().step<"twice">([](int x) { return 2 * x; });
  LogRecorder logs;
  std::optional<absl::StatusOr<EdgeWorker>> worker;
  std::optional<absl::StatusOr<Client>> client;
  std::thread worker_starter(
      [&] { worker.emplace(EdgeWorker::start(flow, test_worker_config(url, &logs))); });
  const bool retried = logs.wait_for_text("database unreachable at startup; retrying");
  std::thread client_starter([&] { client.emplace(Client::connect({.connection_string = url})); });
  EXPECT_TRUE(cluster.start());
  worker_starter.join();
  client_starter.join();
  EXPECT_TRUE(retried) << "the worker's first attempt failed and was retried";
  ASSERT_TRUE(worker.has_value() && client.has_value());
  ASSERT_THAT(*worker, IsOk());
  ASSERT_THAT(*client, IsOk());

  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, (*client)->start_run(flow, 21));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              (*client)->wait_for_run(run_id, std::chrono::seconds(60)));
  EXPECT_EQ(run.output, json({{"twice", 42}}));
  (*worker)->stop();
  EXPECT_THAT((*worker)->wait(), IsOk());
}

TEST(WorkerRestartTest, StartupRetriesOnlyWhileTheDatabaseIsUnreachableAndOnlyUntilItsTimeout) {
  OwnCluster cluster;
  ASSERT_TRUE(cluster.start());
  const std::string url = cluster.url();
  auto flow = Flow<"wStartupTimeout", int>().step<"once">([](int x) { return x; });

  // Reachable, but no schema: not transient, so it fails at once.
  LogRecorder no_schema_logs;
  EXPECT_THAT(EdgeWorker::start(flow, test_worker_config(url, &no_schema_logs)),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("run `pgflow migrate`")));
  EXPECT_THAT(Client::connect({.connection_string = url}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("run `pgflow migrate`")));
  EXPECT_FALSE(no_schema_logs.contains("retrying"));

  ASSERT_THAT(migrate(url), IsOk());
  ASSERT_TRUE(cluster.stop());
  // Unreachable with a zero timeout: one attempt.
  LogRecorder once_logs;
  WorkerConfig once = test_worker_config(url, &once_logs);
  once.startup_timeout = std::chrono::milliseconds(0);
  EXPECT_THAT(EdgeWorker::start(flow, once),
              StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot connect")));
  EXPECT_FALSE(once_logs.contains("retrying"));
  EXPECT_THAT(
      Client::connect({.connection_string = url, .connect_timeout = std::chrono::milliseconds(0)}),
      StatusIs(absl::StatusCode::kUnavailable, HasSubstr("cannot connect")));

  // Unreachable past a short timeout: the last error, saying how long it was retried.
  LogRecorder short_logs;
  WorkerConfig brief = test_worker_config(url, &short_logs);
  brief.startup_timeout = std::chrono::milliseconds(300);
  EXPECT_THAT(EdgeWorker::start(flow, brief),
              StatusIs(absl::StatusCode::kUnavailable,
                       AllOf(HasSubstr("cannot connect"),
                             HasSubstr("unreachable for the startup_timeout of 300 ms"))));
  EXPECT_TRUE(short_logs.contains("database unreachable at startup; retrying"));
  EXPECT_THAT(Client::connect(
                  {.connection_string = url, .connect_timeout = std::chrono::milliseconds(300)}),
              StatusIs(absl::StatusCode::kUnavailable,
                       HasSubstr("unreachable for the connect_timeout of 300 ms")));
}

// The most handlers that ran at the same moment, from the "start <us>" / "end <us>" lines every
// process appended to `log`; a handler without an end (its process was killed) ends at `killed_us`.
int most_handlers_at_once(const std::string& log, long long killed_us, int* started) {
  std::ifstream in(log);
  std::vector<std::pair<long long, int>> events;  // (time, +1 start / -1 end)
  std::map<std::string, int> open;                // task -> starts without an end
  std::string kind, task;
  long long us = 0;
  while (in >> kind >> us >> task) {
    events.emplace_back(us, kind == "start" ? 1 : -1);
    open[task] += kind == "start" ? 1 : -1;
    if (kind == "start") ++*started;
  }
  for (const auto& [t, n] : open) {
    for (int i = 0; i < n; ++i) events.emplace_back(killed_us, -1);
  }
  std::sort(events.begin(), events.end());  // at one instant, ends (-1) before starts
  int now = 0, most = 0;
  for (const auto& [t, delta] : events) most = std::max(most, now += delta);
  return most;
}

// Three worker processes (max_concurrent 4 each: 12 slots) drain 60 runs of wLimited, whose
// step allows 5 started tasks at once across all workers. No more than 5 handlers ever run at
// the same moment (every handler's start and end, logged by all processes to one file), no
// more than 5 tasks hold a slot in SQL samples, and one process killed mid-drain gives its
// slots back through stall recovery: every run completes.
TEST_F(WorkerProcessTest, AConcurrencyLimitHoldsAcrossWorkerProcessesAndAKill) {
  constexpr int kRuns = 60;
  const std::string url = db_->url();
  const std::string log = absl::StrCat(::testing::TempDir(), "pgflow-limited-", getpid(), ".log");
  std::remove(log.c_str());
  std::vector<std::unique_ptr<ChildWorker>> workers;
  for (int i = 0; i < 3; ++i) workers.push_back(ChildWorker::limited(url, 40, log));
  for (const auto& w : workers) ASSERT_TRUE(w->spawned());
  ASSERT_THAT(wait_until(*conn_,
                         "select count(*) = 3 from pgflow.workers "
                         "where function_name = 'wLimited-worker' and stopped_at is null"),
              IsOk());
  for (int i = 0; i < kRuns; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run, start_run(*conn_, "wLimited", i));
  }

  const std::string sample =
      "select count(*) filter (where status = 'started') || ' ' || "
      "count(*) filter (where gate = 'admitted' and status in ('queued', 'started')) || ' ' || "
      "count(*) filter (where status = 'completed') from pgflow.step_tasks "
      "where flow_slug = 'wLimited'";
  int most_started = 0, most_admitted = 0, completed = 0;
  long long killed_us = 0;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
  while (completed < kRuns && std::chrono::steady_clock::now() < deadline) {
    std::istringstream row(sql(sample));
    int started = 0, admitted = 0;
    row >> started >> admitted >> completed;
    most_started = std::max(most_started, started);
    most_admitted = std::max(most_admitted, admitted);
    if (killed_us == 0 && completed >= kRuns / 3) {
      workers[0]->signal(SIGKILL);
      EXPECT_EQ(workers[0]->wait(), -SIGKILL);
      killed_us = pgflow::testing::now_us();
      // Its tasks look stalled at once (instead of after timeout + 30 s): those of the worker
      // whose heartbeat stopped.
      std::this_thread::sleep_for(std::chrono::seconds(1));
      sql("update pgflow.step_tasks t set queued_at = now() - interval '2 hours', "
          "started_at = now() - interval '1 hour' from pgflow.workers w "
          "where t.flow_slug = 'wLimited' and t.status = 'started' "
          "and w.worker_id = t.last_worker_id and w.last_heartbeat_at < now() - interval '800 ms'");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(completed, kRuns) << "not every run completed within 120 s";
  EXPECT_NE(killed_us, 0);
  EXPECT_EQ(
      sql("select count(*) from pgflow.runs where flow_slug = 'wLimited' and status = 'completed'"),
      std::to_string(kRuns));
  EXPECT_LE(most_started, pgflow::testing::kLimitedFlowLimit);
  EXPECT_LE(most_admitted, pgflow::testing::kLimitedFlowLimit);
  int handler_starts = 0;
  EXPECT_LE(most_handlers_at_once(log, killed_us, &handler_starts),
            pgflow::testing::kLimitedFlowLimit);
  EXPECT_GE(handler_starts, kRuns);
  for (std::size_t i = 1; i < workers.size(); ++i) workers[i]->signal(SIGTERM);
  for (std::size_t i = 1; i < workers.size(); ++i) EXPECT_EQ(workers[i]->wait(), 0);
  std::remove(log.c_str());
}

}  // namespace
}  // namespace pgflow
