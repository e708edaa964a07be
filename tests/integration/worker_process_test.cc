// Workers as separate processes: signals, crashes, and a PostgreSQL restart.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/migrate.h"
#include "pgflow/worker.h"
#include "testing/child_flow.h"
#include "testing/database_test.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

extern char** environ;

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::query_text;
using pgflow::testing::start_run;
using pgflow::testing::test_worker_config;
using pgflow::testing::TestDatabase;
using pgflow::testing::wait_for_run;
using pgflow::testing::wait_until;

// A worker process running the wChild flow (handler sleeps `sleep_ms`).
class ChildWorker {
 public:
  ChildWorker(const std::string& url, int sleep_ms) {
    std::string ms = std::to_string(sleep_ms);
    std::string bin = PGFLOW_TEST_WORKER_BIN;
    char* argv[] = {bin.data(), const_cast<char*>(url.c_str()), ms.data(), nullptr};
    spawned_ = posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv, environ) == 0;
  }
  ~ChildWorker() {
    if (pid_ > 0 && !reaped_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool spawned() const { return spawned_; }
  void signal(int sig) { kill(pid_, sig); }
  // Waits for the process to end; its exit code, or -signal when killed.
  int wait() {
    int status = 0;
    waitpid(pid_, &status, 0);
    reaped_ = true;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -WTERMSIG(status);
  }

 private:
  pid_t pid_ = -1;
  bool spawned_ = false;
  bool reaped_ = false;
};

class WorkerProcessTest : public pgflow::testing::DatabaseTest {
 protected:
  // Waits until a wChild worker is registered and a task of `run_id` is started.
  void wait_worker_registered() {
    ASSERT_THAT(wait_until(*conn_, "select exists (select 1 from pgflow.workers "
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
  ASSERT_THAT(wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                         {run_id}),
              IsOk());
  child.signal(SIGTERM);
  EXPECT_EQ(child.wait(), 0);
  // Reported before the process exited: no waiting needed.
  EXPECT_EQ(sql("select status || '/' || attempts_count from pgflow.step_tasks where run_id = $1::uuid",
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
  ASSERT_THAT(wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
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
  EXPECT_EQ(sql("select attempts_count || '/' || requeued_count from pgflow.step_tasks where run_id = $1::uuid",
                {run_id}),
            "2/1");
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
    std::string cmd = absl::StrCat(PGFLOW_SOURCE_DIR, "/scripts/pgcluster ", command, " ", dir_,
                                   std::string_view(command) == "start" ? " --fast" : "",
                                   " >/dev/null");
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
    ASSERT_THAT(wait_until(conn, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                           {run_id}),
                IsOk());
  }
  // The server goes away while the handler works; its result is computed during the outage.
  ASSERT_TRUE(cluster.stop());
  release = true;
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

TEST(WorkerRestartTest, StopsWithinTheGracePeriodWhileTheDatabaseIsDown) {
  OwnCluster cluster;
  ASSERT_TRUE(cluster.start());
  const std::string url = cluster.url();
  ASSERT_THAT(migrate(url), IsOk());
  std::atomic<bool> ran{false};
  auto flow = Flow<"wOutage", int>().step<"quick">([&](int x) {
    ran = true;
    return x;
  });
  WorkerConfig config = test_worker_config(url);
  config.stop_grace_period = std::chrono::seconds(1);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(flow, config));
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(url));
    PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id, start_run(conn, "wOutage", 1));
    ASSERT_THAT(wait_for_run(conn, run_id), IsOk());
  }
  ASSERT_TRUE(cluster.stop());
  // Every thread is now retrying against a dead server; a stop must still finish (a hang
  // here would fail the test by its ctest timeout).
  std::this_thread::sleep_for(std::chrono::milliseconds(500));
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
  EXPECT_FALSE(worker.running());
  EXPECT_TRUE(ran.load());
}

}  // namespace
}  // namespace pgflow
