// Faults that used to cost time or correctness (issue "Faults that still cost time or
// correctness"), each with a real worker on a real server: a claim whose reply is lost is given
// back at once instead of waiting for stall recovery; a value that would change in conversion,
// an input the worker cannot read and a handler's pgflow::permanent failure fail the task on
// their first attempt; a cancelled run shows no running step.
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/status.h"
#include "pgflow/worker.h"
#include "testing/database_test.h"
#include "testing/status_matchers.h"
#include "testing/tcp_proxy.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::LogRecorder;
using pgflow::testing::query_text;
using pgflow::testing::TcpProxy;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_for_run;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Step timeout 60 s: stall recovery would take a task back only after 90 s.
inline const auto kLostClaim =
    Flow<"fLostClaim", int>({.max_attempts = 3, .timeout = 60}).step<"inc">([](int x) {
      return x + 1;
    });

inline const auto kExact =
    Flow<"fExact", int>({.max_attempts = 3, .base_delay = 1}).step<"double">([](int x) {
      return 2 * x;
    });

inline const auto kWideMap =
    Flow<"fWide", std::vector<double>>({.max_attempts = 3, .base_delay = 1})
        .map<"copy">([](double x) { return x; });

inline const auto kDeep =
    Flow<"fDeep", json>({.max_attempts = 3, .base_delay = 1}).step<"echo">([](const json& in) {
      return in;
    });
inline const auto kDeepMap =
    Flow<"fDeepMap", std::vector<json>>({.max_attempts = 3, .base_delay = 1})
        .map<"echo">([](const json& in) { return in; });

inline const auto kRefuses =
    Flow<"fRefuses", std::string>({.max_attempts = 3, .base_delay = 1})
        .step<"lookup">([](const std::string& customer) -> absl::StatusOr<int> {
          if (customer == "nobody") return permanent(absl::NotFoundError("no such customer"));
          return absl::UnavailableError("try later");
        });

// Fails once the test lets it (or the worker stops).
std::atomic<bool> fail_now{false};
inline const auto kFenced =
    Flow<"fFenced", int>({.max_attempts = 3, .timeout = 60})
        .step<"slow">([](int, Context& ctx) -> absl::StatusOr<int> {
          while (!fail_now.load() && !ctx.stop_token().stop_requested()) {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
          }
          return absl::UnavailableError("failed after another claim took the attempt over");
        });

class FaultsTest : public pgflow::testing::DatabaseTest {
 protected:
  std::string sql(const std::string& q, const std::vector<pg::Param>& p = {}) {
    auto r = query_text(*conn_, q, p);
    EXPECT_THAT(r, IsOk()) << q;
    return r.ok() ? *r : "";
  }
  json run_to_end(const std::string& run_id) {
    auto run = wait_for_run(*conn_, run_id);
    EXPECT_THAT(run, IsOk());
    return run.ok() ? *run : json();
  }
  std::string start(const std::string& flow, const std::string& input_sql) {
    return sql(absl::StrCat("select run_id from pgflow.start_flow('", flow, "', ", input_sql, ")"));
  }
  // Compiles kLostClaim, then starts `n` runs of it while no worker claims.
  std::vector<std::string> start_unclaimed_lost_claim_runs(int n) {
    {
      auto compiled = EdgeWorker::start(kLostClaim, test_worker_config(db_->url()));
      EXPECT_THAT(compiled.status(), IsOk());
    }
    std::vector<std::string> runs;
    for (int i = 0; i < n; ++i) runs.push_back(start("fLostClaim", absl::StrCat("'", i, "'")));
    return runs;
  }
  // A proxy to the test server, and a worker config (5 handlers) whose connections go through
  // it, in plain text: the proxy reads PostgreSQL's framing.
  std::unique_ptr<TcpProxy> proxy_to_server() {
    auto proxy = TcpProxy::start(std::stoi(sql("select current_setting('port')")));
    EXPECT_THAT(proxy.status(), IsOk());
    return proxy.ok() ? *std::move(proxy) : nullptr;
  }
  WorkerConfig through(const TcpProxy& proxy) {
    const std::string port = sql("select current_setting('port')");
    WorkerConfig config = test_worker_config(
        absl::StrReplaceAll(
            db_->url(), {{absl::StrCat(":", port, "/"), absl::StrCat(":", proxy.port(), "/")}}) +
            "?sslmode=disable&gssencmode=disable",
        &logs_);
    config.max_concurrent = 5;
    return config;
  }
  // The task row of a single-task step, as "status attempts requeued error".
  std::string task(const std::string& run_id) {
    return sql(
        "select concat_ws(' | ', status, attempts_count, requeued_count, error_message) "
        "from pgflow.step_tasks where run_id = $1::uuid",
        {run_id});
  }

  LogRecorder logs_;
};

TEST_F(FaultsTest, AClaimWhoseReplyIsLostIsGivenBackAndRunWithoutStallRecovery) {
  const std::vector<std::string> runs = start_unclaimed_lost_claim_runs(3);
  std::unique_ptr<TcpProxy> proxy = proxy_to_server();
  ASSERT_NE(proxy, nullptr);
  // The claim commits, then the connection ends before the worker reads a byte of the reply.
  proxy->cut_after_commit_of("pgflow.claim_tasks(");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kLostClaim, through(*proxy)));

  for (const std::string& run_id : runs) {
    EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
    EXPECT_EQ(task(run_id), "completed | 1 | 0") << "one attempt, never requeued by stall recovery";
  }
  EXPECT_EQ(proxy->cuts_after_commit(), 1) << "the claim was cut after its commit";
  std::vector<std::string> gave_back;
  for (const LogRecorder::Entry& e : logs_.entries()) {
    if (e.message.starts_with("gave back the tasks of a claim whose reply was lost"))
      gave_back.push_back(e.text());
  }
  ASSERT_EQ(gave_back.size(), 1u) << "the worker said so, once";
  EXPECT_THAT(gave_back[0], HasSubstr("tasks=3"));
}

// A connection cut while its claim still runs on the server (here: waiting for a run another
// session locks). The worker gives the claim back on its next connection; since schema 0030
// that release waits for the claim to end and then gives back what it started. Before, it found
// nothing, the claim committed afterwards, and its tasks waited for stall recovery (the soak
// found it). The proxy lets the worker reconnect only once the claim waits for the run. The
// worker waits for it 1 s, then owes the release and claims other work meanwhile.
TEST_F(FaultsTest, AClaimCutWhileItRunsIsGivenBackOnceItCommits) {
  const std::vector<std::string> runs = start_unclaimed_lost_claim_runs(3);
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection holder, pg::Connection::open(db_->url(), "holder"));
  ASSERT_THAT(holder.exec("begin").status(), IsOk());
  ASSERT_THAT(holder.exec("select 1 from pgflow.runs where run_id = $1::uuid for update", {runs[1]})
                  .status(),
              IsOk());
  std::unique_ptr<TcpProxy> proxy = proxy_to_server();
  ASSERT_NE(proxy, nullptr);
  proxy->cut_once_sent("pgflow.claim_tasks(");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kLostClaim, through(*proxy)));

  ASSERT_THAT(wait_until(*conn_,
                         "select exists (select from pg_stat_activity where "
                         "wait_event_type = 'Lock' and query like '%pgflow.claim_tasks(%')"),
              IsOk())
      << "the cut claim waits for the locked run";
  EXPECT_EQ(proxy->cuts_once_sent(), 1);
  proxy->accept_again();
  EXPECT_THAT(wait_until(*conn_,
                         "select exists (select from pg_stat_activity where "
                         "wait_event_type = 'Lock' and query like '%pgflow.release_claim(%')"),
              IsOk())
      << "the worker's release of it waits for the claim still running";
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks t join pgflow.runs r using (run_id) "
                "where r.flow_slug = 'fLostClaim' and t.status = 'queued'"),
            "3")
      << "nothing is claimed meanwhile";
  // After 1 s the worker stops waiting, owes the release, and goes on claiming.
  ASSERT_TRUE(logs_.wait_for_text("could not be given back yet"));
  const std::string later = start("fLostClaim", "'7'");
  EXPECT_EQ(run_to_end(later)["run"]["status"], "completed") << "a later run, while it is owed";
  ASSERT_THAT(holder.exec("commit").status(), IsOk());

  for (const std::string& run_id : runs) {
    EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed");
    EXPECT_EQ(task(run_id), "completed | 1 | 0") << "one attempt, never requeued by stall recovery";
  }
  EXPECT_TRUE(logs_.contains("gave back the tasks of a claim whose reply was lost"));
}

// A worker asked to stop while it cannot reach the server, holding a claim whose reply was
// lost, gives the claim back before it ends once the server answers (for at most 5 s), so its
// tasks do not wait for stall recovery (step timeout + 30 s) after the worker is gone.
TEST_F(FaultsTest, AWorkerStoppingWithALostClaimGivesItBackBeforeItEnds) {
  const std::vector<std::string> runs = start_unclaimed_lost_claim_runs(3);
  std::unique_ptr<TcpProxy> proxy = proxy_to_server();
  ASSERT_NE(proxy, nullptr);
  proxy->cut_once_sent("pgflow.claim_tasks(");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kLostClaim, through(*proxy)));
  ASSERT_THAT(wait_until(*conn_,
                         "select count(*) = 3 from pgflow.step_tasks "
                         "where flow_slug = 'fLostClaim' and status = 'started'"),
              IsOk())
      << "the cut claim committed; the worker cannot reconnect";

  std::jthread stopper([&worker] {
    worker.stop();
    EXPECT_THAT(worker.wait(), IsOk());
  });
  ASSERT_TRUE(logs_.wait_for_text("give back lost claims"))
      << "the stopping worker tries to give the claim back (the server is unreachable)";
  proxy->accept_again();
  stopper.join();

  EXPECT_EQ(sql("select string_agg(status || ' ' || attempts_count, ', ') from pgflow.step_tasks "
                "where flow_slug = 'fLostClaim'"),
            "queued 0, queued 0, queued 0")
      << "given back before the worker ended";
  EXPECT_TRUE(logs_.contains("gave back the tasks of a claim whose reply was lost"));
  EXPECT_FALSE(logs_.contains("stopping with a claim whose reply was lost"));
}

// A fatal claim whose reply is lost: the claim paused the worker's function and committed, but
// the worker never saw its outcome, so it does not stop as after a fatal claim it sees. Like
// every running worker of a paused function it claims nothing, and its next heartbeat logs the
// pause, with the reason (the queue and the unsupported message) and how to lift it. Before,
// it polled on in silence: only pause_reason in the database said why nothing ran.
TEST_F(FaultsTest, AFatalClaimWhoseReplyIsLostIsLoggedAtTheNextHeartbeat) {
  const std::vector<std::string> runs = start_unclaimed_lost_claim_runs(1);
  const std::string bogus =
      sql("select pgmq.send('flostclaim', jsonb_build_object('flow_slug', 'fLostClaim', 'run_id', "
          "gen_random_uuid(), 'step_slug', 'inc', 'task_index', 0))::text");
  std::unique_ptr<TcpProxy> proxy = proxy_to_server();
  ASSERT_NE(proxy, nullptr);
  proxy->cut_after_commit_of("pgflow.claim_tasks(");
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kLostClaim, through(*proxy)));

  ASSERT_TRUE(logs_.wait_for_text("this worker's function is paused"));
  EXPECT_EQ(proxy->cuts_after_commit(), 1) << "the fatal claim was cut after its commit";
  EXPECT_TRUE(logs_.wait_for_text(absl::StrCat("unsupported message(s) ", bogus)));
  EXPECT_TRUE(logs_.wait_for_text("select pgflow.resume_worker_function('fLostClaim-worker')"));
  EXPECT_EQ(task(runs[0]), "queued | 0 | 0") << "nothing was claimed";

  ASSERT_EQ(sql("select pgmq.delete('flostclaim', $1::bigint)::text", {bogus}), "true");
  sql("select pgflow.resume_worker_function('fLostClaim-worker')");
  ASSERT_TRUE(logs_.wait_for_text("this worker's function was resumed"));
  EXPECT_EQ(run_to_end(runs[0])["run"]["status"], "completed") << "the same worker runs it";
  EXPECT_EQ(task(runs[0]), "completed | 1 | 0");
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

// A listen host that accepts and never answers (it drops packets) makes each connection try last
// connect_timeout. The worker polls meanwhile, and tries that host again only after a backoff:
// before, every poll and every heartbeat wait tried it, so the worker claimed once per
// connect_timeout and its heartbeats drifted as far apart.
TEST_F(FaultsTest, AnUnansweringListenHostIsTriedAgainOnlyAfterABackoff) {
  const std::string port = sql("select current_setting('port')");
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::unique_ptr<TcpProxy> silent, TcpProxy::start(std::stoi(port)));
  silent->set_silent(true);
  WorkerConfig config = test_worker_config(db_->url(), &logs_);
  config.listen_connection_string =
      absl::StrReplaceAll(
          db_->url(), {{absl::StrCat(":", port, "/"), absl::StrCat(":", silent->port(), "/")}}) +
      "?sslmode=disable&gssencmode=disable&connect_timeout=2";
  config.poll_interval = std::chrono::milliseconds(100);
  std::atomic<int> claims{0};
  config.metrics = [&claims](const WorkerMetric& m) {
    if (m.kind == WorkerMetric::Kind::kClaimLatency) ++claims;
  };
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker, EdgeWorker::start(kLostClaim, config));
  ASSERT_TRUE(pgflow::testing::wait_for([&claims] { return claims.load() >= 12; }));
  // The poller's and the heartbeat's listen sessions each tried about twice (1 s, then 2 s of
  // backoff between tries of 2 s each); without the backoff the poller alone tries once a claim.
  EXPECT_LE(silent->accepted(), 8) << "connection tries during " << claims.load() << " claims";
  EXPECT_TRUE(logs_.contains("cannot reach the listen connection"));
  const std::string run_id = start("fLostClaim", "'1'");
  EXPECT_EQ(run_to_end(run_id)["run"]["status"], "completed") << "polling runs the work meanwhile";
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());
}

// A failure of an attempt that another claim has taken over since (stall recovery queued the
// task again and another worker claimed it; a resent report after a lost reply) changes
// nothing: the worker names the claim its attempt came from, and the database ignores a report
// of any other (schema 0027). Without the fence it would fail the attempt that now runs.
TEST_F(FaultsTest, AFailureOfAnAttemptAnotherClaimTookOverChangesNothing) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kFenced, test_worker_config(db_->url(), &logs_)));
  const std::string run_id = start("fFenced", "'1'");
  ASSERT_THAT(
      wait_until(*conn_, "select status = 'started' from pgflow.step_tasks where run_id = $1::uuid",
                 {run_id}),
      IsOk());
  // The take-over, as the database records it (the worker still owns the task otherwise, so it
  // goes on and reports).
  const std::string other =
      sql("update pgflow.step_tasks set last_claim_id = gen_random_uuid() where run_id = $1::uuid "
          "returning last_claim_id::text",
          {run_id});
  fail_now = true;
  worker.stop();
  EXPECT_THAT(worker.wait(), IsOk());  // stopped: every result is reported
  EXPECT_EQ(task(run_id), "started | 1 | 0") << "not failed, not queued for a retry";
  EXPECT_EQ(
      sql("select last_claim_id::text from pgflow.step_tasks where run_id = $1::uuid", {run_id}),
      other);
}

TEST_F(FaultsTest, AnInputThatWouldChangeInConversionFailsTheTaskOnItsFirstAttempt) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kExact, test_worker_config(db_->url(), &logs_)));
  const std::string fraction = start("fExact", "'2.5'");
  const std::string too_big = start("fExact", "'30000000000'");
  const std::string fits = start("fExact", "'2.0'");
  for (const std::string& run_id : {fraction, too_big}) {
    const json run = run_to_end(run_id);
    EXPECT_EQ(run["run"]["status"], "failed");
    EXPECT_THAT(task(run_id), AllOf(HasSubstr("failed | 1 | 0 | flow \"fExact\", step \"double\": "
                                              "cannot convert the flow input: a JSON number"),
                                    HasSubstr("int (permanent: not retried)")))
        << "one attempt of three";
  }
  EXPECT_THAT(task(fraction), HasSubstr("with a fraction does not convert exactly to int"));
  EXPECT_THAT(task(too_big), HasSubstr("is out of the range of int"));
  EXPECT_EQ(run_to_end(fits)["run"]["output"], json({{"double", 4}})) << "2.0 is the int 2";
}

TEST_F(FaultsTest, AnInputTheWorkerCannotReadFailsTheTaskInsteadOfReadingNull) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kWideMap, test_worker_config(db_->url(), &logs_)));
  // jsonb holds numbers no double can (nlohmann/json refuses to parse them).
  const std::string run_id = start("fWide", "'[1, 1e400]'::jsonb");
  // (Not through get_run_with_states: the harness's JSON reader cannot read 1e400 either.)
  ASSERT_THAT(
      wait_until(*conn_, "select status = 'failed' from pgflow.runs where run_id = $1::uuid",
                 {run_id}),
      IsOk());
  EXPECT_EQ(
      sql("select string_agg(concat_ws(' | ', task_index, status, attempts_count, error_message), "
          "E'\\n' "
          "order by task_index) from pgflow.step_tasks where run_id = $1::uuid and status = "
          "'failed'",
          {run_id}),
      "1 | failed | 1 | pgflow: the task's input is not JSON this worker can read (a number beyond "
      "the range of a double, or text that is not UTF-8) (permanent: not retried)")
      << "the element that cannot be read fails at once; the other completed or was cancelled with "
         "the run";
}

TEST_F(FaultsTest, AnInputNestedDeeperThanAHandlerCanCopyFailsTheTaskNotTheWorker) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker root,
                              EdgeWorker::start(kDeep, test_worker_config(db_->url(), &logs_)));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker map,
                              EdgeWorker::start(kDeepMap, test_worker_config(db_->url(), &logs_)));
  // Started from SQL, where jsonb takes it; 3000 levels would overflow a Debug build's stack
  // in nlohmann's recursive copy.
  const std::string deep = "(repeat('[', 3000) || repeat(']', 3000))::jsonb";
  const std::string run_input = start("fDeep", deep);
  const std::string element = start("fDeepMap", "jsonb_build_array(" + deep + ")");
  EXPECT_EQ(run_to_end(run_input)["run"]["status"], "failed");
  EXPECT_EQ(task(run_input),
            absl::StrCat("failed | 1 | 0 | pgflow: the input of run ", run_input,
                         " is nested deeper than 1000 levels, deeper than this worker "
                         "reads (permanent: not retried)"));
  EXPECT_EQ(run_to_end(element)["run"]["status"], "failed");
  EXPECT_EQ(
      task(element),
      "failed | 1 | 0 | pgflow: the task's input is nested deeper than 1000 levels, deeper than "
      "this worker reads (permanent: not retried)");
  EXPECT_TRUE(root.running());
  EXPECT_TRUE(map.running());
}

TEST_F(FaultsTest, AHandlersPermanentFailureIsNotRetriedAndOthersAre) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kRefuses, test_worker_config(db_->url(), &logs_)));
  const std::string permanent_run = start("fRefuses", "'\"nobody\"'");
  const std::string retried_run = start("fRefuses", "'\"someone\"'");
  EXPECT_EQ(run_to_end(permanent_run)["run"]["status"], "failed");
  EXPECT_EQ(task(permanent_run), "failed | 1 | 0 | no such customer (permanent: not retried)");
  EXPECT_EQ(run_to_end(retried_run)["run"]["status"], "failed");
  EXPECT_EQ(task(retried_run), "failed | 3 | 0 | try later")
      << "a plain failure used its three attempts";
}

TEST_F(FaultsTest, ACancelledRunShowsNoRunningStepAndResumes) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(Client client, Client::connect({.connection_string = db_->url()}));
  {  // Compile, then no worker: the run's step stays started with its task claimed by hand.
    PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker w,
                                EdgeWorker::start(kExact, test_worker_config(db_->url())));
  }
  const std::string run_id = start("fExact", "'3'");
  sql("select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'by-hand', 'fExact', "
      "'fexact', "
      "pgflow.worker_protocol())");
  sql("select count(*) from pgflow.claim_tasks('fexact', 'fExact', array(select msg_id from "
      "pgmq.read('fexact', 60, 1)), "
      "'11111111-1111-1111-1111-111111111111')");
  ASSERT_THAT(client.cancel_run(run_id, "changed my mind"), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client.get_run(run_id));
  ASSERT_EQ(run.steps.size(), 1u);
  EXPECT_EQ(run.steps[0].status, StepStatus::kFailed);
  EXPECT_EQ(run.steps[0].error_message, "cancelled: changed my mind");
  EXPECT_TRUE(run.cancelled());

  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState resumed, client.resume_run(run_id));
  EXPECT_EQ(resumed.steps[0].status, StepStatus::kStarted);
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kExact, test_worker_config(db_->url())));
  EXPECT_EQ(run_to_end(run_id)["run"]["output"], json({{"double", 6}}))
      << "the resumed run completes";
}

}  // namespace
}  // namespace pgflow
