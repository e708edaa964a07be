// DeployedFlow end to end against the real embedded PostgreSQL: workers deploy versions of one
// alias at startup (concurrently, too), an operator switches the alias with compare-and-swap,
// clients start the alias or pin a version, and a version's tasks stay in its own queues.
#include "pgflow/deployed_flow.h"

#include <barrier>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"
#include "pgflow/worker.h"
#include "testing/client_test_base.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::LogRecorder;
using pgflow::testing::query_text;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

std::string greet(const std::string& name) { return "hello " + name; }

// Three versions of alias "dGreet", each with one private queue per step.
inline const auto greet_v1 = Flow<"dGreetV1", std::string>().step<"greet">(greet).step<"shout">(
    after<"greet">, [](const std::string& g) { return g + "!"; });
inline const auto greet_v2 = Flow<"dGreetV2", std::string>().step<"greet">(greet).step<"shout">(
    after<"greet">, [](const std::string& g) { return g + "!!"; });
inline const auto greet_v3 = Flow<"dGreetV3", std::string>().step<"greet">(greet).step<"shout">(
    after<"greet">, [](const std::string& g) { return g + "!!!"; });
inline const auto v1 = define_deployed_flow(with_step_queues(greet_v1), {.alias = "dGreet"});
inline const auto v2 = define_deployed_flow(with_step_queues(greet_v2), {.alias = "dGreet"});
inline const auto v3 = define_deployed_flow(with_step_queues(greet_v3), {.alias = "dGreet"});

class DeployedFlowTest : public pgflow::testing::ClientTestBase {
 protected:
  WorkerConfig config(std::string step = "") {
    WorkerConfig c = test_worker_config(db_->url(), &logs_);
    c.step = std::move(step);
    return c;
  }
  std::string sql(const std::string& q, const std::vector<pg::Param>& p = {}) {
    auto r = query_text(*conn_, q, p);
    EXPECT_THAT(r, IsOk()) << q;
    return r.ok() ? *r : "";
  }
  // The value of `key` in every "worker started" record of flow `flow`, in log order.
  std::vector<std::string> started(const std::string& flow, const std::string& key) const {
    std::vector<std::string> values;
    for (const LogRecorder::Entry& e : logs_.entries()) {
      if (e.message != "worker started") continue;
      std::optional<std::string> value;
      bool of_flow = false;
      for (const LogField& f : e.fields) {
        if (f.key == "flow" && f.value == flow) of_flow = true;
        if (f.key == key) value = f.value;
      }
      if (of_flow) values.push_back(value.value_or("<missing>"));
    }
    return values;
  }
  // Starts `workers` at once (all threads released together) and keeps them.
  template <typename Start>
  void start_together(int workers, const Start& start) {
    std::barrier gate(workers);
    std::vector<std::optional<absl::StatusOr<EdgeWorker>>> results(static_cast<size_t>(workers));
    std::vector<std::thread> threads;
    for (int i = 0; i < workers; ++i) {
      threads.emplace_back([&, i] {
        gate.arrive_and_wait();
        results[static_cast<size_t>(i)].emplace(start(i));
      });
    }
    for (std::thread& t : threads) t.join();
    for (auto& r : results) {
      ASSERT_TRUE(r->ok()) << r->status();
      workers_.push_back(std::move(**r));
    }
  }
  std::optional<std::string> active_version(const std::string& alias) {
    auto aliases = client_->flow_aliases();
    EXPECT_THAT(aliases, IsOk());
    if (!aliases.ok()) return std::nullopt;
    for (const FlowAlias& a : *aliases) {
      if (a.alias == alias) return a.active_flow_slug;
    }
    return std::nullopt;
  }

  LogRecorder logs_;
  std::vector<EdgeWorker> workers_;
};

TEST_F(DeployedFlowTest, ConcurrentStepWorkersOfOneVersionCompileItOnceAndTheOthersVerify) {
  ASSERT_NO_FATAL_FAILURE(start_together(
      4, [&](int i) { return EdgeWorker::start(v1, config(i % 2 == 0 ? "greet" : "shout")); }));
  EXPECT_THAT(started("dGreetV1", "compilation"),
              UnorderedElementsAre("compiled", "verified", "verified", "verified"));
  EXPECT_THAT(started("dGreetV1", "activation"),
              UnorderedElementsAre("activated", "active", "active", "active"));
  EXPECT_THAT(started("dGreetV1", "alias"), ElementsAre("dGreet", "dGreet", "dGreet", "dGreet"));
  EXPECT_EQ(sql("select count(*) from pgflow.flows"), "1");
  EXPECT_EQ(sql("select string_agg(queue_name, ' ' order by queue_name) from pgmq.meta"),
            "dgreetv1__greet dgreetv1__shout");
  EXPECT_EQ(active_version("dGreet"), "dGreetV1");

  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow(v1, "Ada"));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(run.run_id, std::chrono::seconds(60)));
  EXPECT_EQ(done.status, pgflow::RunStatus::kCompleted);
  EXPECT_EQ(done.output, nlohmann::json({{"shout", "hello Ada!"}}));
}

TEST_F(DeployedFlowTest, ConcurrentV2AndV3DeploymentsCompileBothAndLeaveV1Active) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker first, EdgeWorker::start(v1, config("greet")));
  ASSERT_NO_FATAL_FAILURE(start_together(4, [&](int i) {
    const std::string step = i / 2 == 0 ? "greet" : "shout";
    return i % 2 == 0 ? EdgeWorker::start(v2, config(step)) : EdgeWorker::start(v3, config(step));
  }));
  EXPECT_THAT(started("dGreetV2", "activation"), ElementsAre("inactive", "inactive"));
  EXPECT_THAT(started("dGreetV3", "activation"), ElementsAre("inactive", "inactive"));
  EXPECT_THAT(started("dGreetV2", "active_flow"), ElementsAre("dGreetV1", "dGreetV1"));
  EXPECT_THAT(started("dGreetV3", "compilation"), UnorderedElementsAre("compiled", "verified"));
  EXPECT_EQ(active_version("dGreet"), "dGreetV1") << "no last-lock-holder-wins activation";
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::vector<FlowAlias> aliases, client_->flow_aliases());
  ASSERT_EQ(aliases.size(), 1u);
  EXPECT_THAT(aliases[0].versions, UnorderedElementsAre("dGreetV1", "dGreetV2", "dGreetV3"));
}

TEST_F(DeployedFlowTest, RolloutSwitchesNewRunsWhileAV1RunFinishesInV1Queues) {
  // V1 serves only its first step for now: a V1 run waits in V1's shout queue.
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker v1_greet, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState old_run, client_->start_flow("dGreet", "Ada"));
  EXPECT_EQ(old_run.flow_slug, "dGreetV1");
  ASSERT_THAT(wait_until(*conn_,
                         "select exists (select 1 from pgflow.step_tasks where run_id = $1::uuid "
                         "and step_slug = 'shout')",
                         {old_run.run_id}),
              IsOk());

  // Deploy every step of V2, check coverage, switch with compare-and-swap.
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker v2_greet,
                              EdgeWorker::start(v2, only_step<"greet">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker v2_shout,
                              EdgeWorker::start(v2, only_step<"shout">, config()));
  EXPECT_EQ(
      sql("select count(*) from pgflow.steps s where s.flow_slug = 'dGreetV2' and not exists ("
          "select 1 from pgflow.workers w where w.queue_name = s.queue_name and w.stopped_at is "
          "null)"),
      "0")
      << "every V2 step has a live worker";
  PGFLOW_ASSERT_OK_AND_ASSIGN(FlowAlias switched,
                              client_->activate_flow_version("dGreet", "dGreetV2", "dGreetV1"));
  EXPECT_EQ(switched.active_flow_slug, "dGreetV2");

  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState new_run, client_->start_flow(v2, "Bo"));
  EXPECT_EQ(new_run.flow_slug, "dGreetV2");
  EXPECT_EQ(new_run.flow_alias, "dGreet");
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState new_done,
                              client_->wait_for_run(new_run.run_id, std::chrono::seconds(60)));
  EXPECT_EQ(new_done.output, nlohmann::json({{"shout", "hello Bo!!"}}));

  // The V1 run is still V1's: its last task finishes once a V1 shout worker runs.
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker v1_shout,
                              EdgeWorker::start(v1, only_step<"shout">, config()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState old_done,
                              client_->wait_for_run(old_run.run_id, std::chrono::seconds(60)));
  EXPECT_EQ(old_done.output, nlohmann::json({{"shout", "hello Ada!"}}));
  EXPECT_EQ(sql("select string_agg(step_slug || '@' || queue_name, ' ' order by step_slug) from "
                "pgflow.step_tasks "
                "where run_id = $1::uuid",
                {old_run.run_id}),
            "greet@dgreetv1__greet shout@dgreetv1__shout");
  EXPECT_EQ(sql("select string_agg(step_slug || '@' || queue_name, ' ' order by step_slug) from "
                "pgflow.step_tasks "
                "where run_id = $1::uuid",
                {new_run.run_id}),
            "greet@dgreetv2__greet shout@dgreetv2__shout");
}

TEST_F(DeployedFlowTest, ARestartedOldWorkerDoesNotReclaimTheAlias) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker old_worker, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker new_worker, EdgeWorker::start(v2, config("greet")));
  ASSERT_THAT(client_->activate_flow_version("dGreet", "dGreetV2", "dGreetV1"), IsOk());
  old_worker.stop();
  ASSERT_THAT(old_worker.wait(), IsOk());

  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker restarted, EdgeWorker::start(v1, config("greet")));
  EXPECT_THAT(started("dGreetV1", "activation"), ElementsAre("activated", "inactive"));
  EXPECT_THAT(started("dGreetV1", "compilation"), ElementsAre("compiled", "verified"));
  EXPECT_EQ(active_version("dGreet"), "dGreetV2");
}

TEST_F(DeployedFlowTest, LocalRecompilationKeepsMembershipAndActivation) {
  static const auto changed = define_deployed_flow(
      with_step_queues(Flow<"dGreetV1", std::string>().step<"greet">(greet)), {.alias = "dGreet"});
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker first, EdgeWorker::start(v1, config("greet")));
  first.stop();
  ASSERT_THAT(first.wait(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker recompiled, EdgeWorker::start(changed, config("greet")));
  EXPECT_THAT(started("dGreetV1", "compilation"), ElementsAre("compiled", "recompiled"));
  EXPECT_THAT(started("dGreetV1", "activation"), ElementsAre("activated", "active"));
  EXPECT_EQ(sql("select flow_alias from pgflow.flows where flow_slug = 'dGreetV1'"), "dGreet");
  EXPECT_EQ(sql("select string_agg(queue_name, ' ') from pgmq.meta"), "dgreetv1__greet");
}

TEST_F(DeployedFlowTest, AWorkerDeployingAVersionUnderAnotherAliasFailsToStart) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker deployed, EdgeWorker::start(v1, config("greet")));
  // The same concrete flow without define_deployed_flow is its own alias: a different one.
  auto plain = EdgeWorker::start(with_step_queues(greet_v1), config("greet"));
  EXPECT_THAT(plain.status(), StatusIs(absl::StatusCode::kFailedPrecondition,
                                       AllOf(HasSubstr("\"dGreetV1\" belongs to alias \"dGreet\""),
                                             HasSubstr("under alias \"dGreetV1\""))));
  EXPECT_EQ(active_version("dGreet"), "dGreetV1");
  EXPECT_EQ(active_version("dGreetV1"), std::nullopt);
}

TEST_F(DeployedFlowTest, StartupLogSeparatesCompilationActivationQueueModeAndRoute) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(v2, only_step<"shout">, config()));
  std::vector<std::string> lines;
  for (const LogRecorder::Entry& e : logs_.entries()) {
    if (e.message == "worker started") lines.push_back(e.text());
  }
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_THAT(lines[0], AllOf(HasSubstr("flow=dGreetV2"), HasSubstr("compilation=compiled"),
                              HasSubstr("activation=activated"), HasSubstr("alias=dGreet"),
                              HasSubstr("active_flow=dGreetV2"), HasSubstr("queue_mode=step"),
                              HasSubstr("route=greet:dgreetv2__greet,shout:dgreetv2__shout"),
                              HasSubstr("queue=dgreetv2__shout"), HasSubstr("step=shout")));
}

// ---- the client ----------------------------------------------------------------------------

TEST_F(DeployedFlowTest, ClientStartsAliasesAndPinnedVersionsAndShowsTheConcreteSlug) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker a, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker b, EdgeWorker::start(v2, config("greet")));

  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState by_alias, client_->start_flow("dGreet", "Ada"));
  EXPECT_EQ(by_alias.flow_slug, "dGreetV1");
  EXPECT_EQ(by_alias.flow_alias, "dGreet");
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState explicit_alias,
                              client_->start_flow_by_alias("dGreet", "Ada"));
  EXPECT_EQ(explicit_alias.flow_slug, "dGreetV1");
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState typed_alias, client_->start_flow_by_alias(v2, "Ada"));
  EXPECT_EQ(typed_alias.flow_slug, "dGreetV1");
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState typed, client_->start_flow(v2, "Ada"));
  EXPECT_EQ(typed.flow_slug, "dGreetV1") << "a DeployedFlow starts its alias";
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState pinned, client_->start_flow_by_slug(v2, "Ada"));
  EXPECT_EQ(pinned.flow_slug, "dGreetV2") << "a pinned start runs the inactive version";
  EXPECT_EQ(pinned.flow_alias, "dGreet");
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState read, client_->get_run(pinned.run_id));
  EXPECT_EQ(read.flow_slug, "dGreetV2");
  EXPECT_EQ(read.flow_alias, "dGreet");

  std::vector<std::string> started_in_tx;
  absl::Status in_tx = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    for (const absl::StatusOr<RunState>& r :
         {tx.start_flow("dGreet", "Tx"), tx.start_flow_by_alias("dGreet", "Tx")}) {
      if (!r.ok()) return r.status();
      started_in_tx.push_back(r->flow_slug);
    }
    absl::StatusOr<RunState> pinned_in_tx = tx.start_flow_by_slug("dGreetV2", "Tx");
    if (!pinned_in_tx.ok()) return pinned_in_tx.status();
    started_in_tx.push_back(pinned_in_tx->flow_slug);
    // Typed: a DeployedFlow starts its alias, or its own version when pinned.
    for (const absl::StatusOr<RunState>& typed_in_tx :
         {tx.start_flow(v2, "Tx"), tx.start_flow_by_slug(v2, "Tx")}) {
      if (!typed_in_tx.ok()) return typed_in_tx.status();
      started_in_tx.push_back(typed_in_tx->flow_slug);
    }
    return absl::OkStatus();
  });
  EXPECT_THAT(in_tx, IsOk());
  EXPECT_THAT(started_in_tx,
              ElementsAre("dGreetV1", "dGreetV1", "dGreetV2", "dGreetV1", "dGreetV2"));
  EXPECT_EQ(sql("select count(*) from pgflow.runs where input = '\"Tx\"'"), "5");
}

TEST_F(DeployedFlowTest, TheLeanStartFollowsTheSameAliasRules) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker a, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker b, EdgeWorker::start(v2, config("greet")));
  auto slug_of = [&](const absl::StatusOr<std::string>& run_id) {
    return run_id.ok() ? sql("select flow_slug from pgflow.runs where run_id = $1::uuid", {*run_id})
                       : run_id.status().ToString();
  };
  EXPECT_EQ(slug_of(client_->start_run("dGreet", "Ada")), "dGreetV1")
      << "an alias starts its active version";
  EXPECT_EQ(slug_of(client_->start_run(v2, "Ada")), "dGreetV1")
      << "a DeployedFlow starts its alias";
  EXPECT_EQ(slug_of(client_->start_run_by_slug(v2, "Ada")), "dGreetV2")
      << "a pinned start runs that version";
  EXPECT_EQ(slug_of(client_->start_run_by_slug("dGreetV2", "Ada")), "dGreetV2");
  EXPECT_THAT(client_->start_run("dGreetV1", "Ada"),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("Flow alias \"dGreetV1\" does not exist"),
                             HasSubstr("under alias \"dGreet\""))));
}

TEST_F(DeployedFlowTest, ClientNeverFallsBackFromAMissingAliasToASlug) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker a, EdgeWorker::start(v1, config("greet")));
  EXPECT_THAT(client_->start_flow("dGreetV1", "Ada").status(),
              StatusIs(absl::StatusCode::kNotFound,
                       AllOf(HasSubstr("Flow alias \"dGreetV1\" does not exist"),
                             HasSubstr("under alias \"dGreet\""))));
  EXPECT_THAT(client_->start_flow_by_slug("dGreet", "Ada").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("Flow \"dGreet\" does not exist")));
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "0");
}

TEST_F(DeployedFlowTest, ActivationIsACompareAndSwapThatNamesTheActualVersion) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker a, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker b, EdgeWorker::start(v2, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker c, EdgeWorker::start(v3, config("greet")));

  EXPECT_THAT(client_->activate_flow_version("dGreet", "dGreetV3", "dGreetV2").status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("points to \"dGreetV1\", but \"dGreetV2\" was expected"),
                             HasSubstr("nothing changed"))));
  EXPECT_THAT(client_->activate_flow_version("dGreet", "dGreetV3", std::nullopt).status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("but no active version was expected")));
  EXPECT_THAT(client_->activate_flow_version("other", "dGreetV3", "dGreetV1").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("is a version of alias \"dGreet\", not of \"other\"")));
  EXPECT_THAT(client_->activate_flow_version("dGreet", "dGreetV9", "dGreetV1").status(),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("Flow \"dGreetV9\" does not exist")));
  EXPECT_EQ(active_version("dGreet"), "dGreetV1");

  PGFLOW_ASSERT_OK_AND_ASSIGN(FlowAlias now,
                              client_->activate_flow_version("dGreet", "dGreetV3", "dGreetV1"));
  EXPECT_EQ(now.alias, "dGreet");
  EXPECT_EQ(now.active_flow_slug, "dGreetV3");
  EXPECT_THAT(now.versions, ElementsAre("dGreetV1", "dGreetV2", "dGreetV3"));
  EXPECT_TRUE(now.updated_at.has_value());
  // Rollback: the same check, expecting what is active now.
  PGFLOW_ASSERT_OK_AND_ASSIGN(FlowAlias back,
                              client_->activate_flow_version("dGreet", "dGreetV1", "dGreetV3"));
  EXPECT_EQ(back.active_flow_slug, "dGreetV1");
}

TEST_F(DeployedFlowTest, ConcurrentActivationsExpectingTheSameVersionLetOneWin) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker a, EdgeWorker::start(v1, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker b, EdgeWorker::start(v2, config("greet")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker c, EdgeWorker::start(v3, config("greet")));
  std::barrier gate(2);
  std::vector<std::optional<absl::StatusOr<FlowAlias>>> results(2);
  std::vector<std::thread> threads;
  for (int i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      gate.arrive_and_wait();
      results[static_cast<size_t>(i)].emplace(
          client_->activate_flow_version("dGreet", i == 0 ? "dGreetV2" : "dGreetV3", "dGreetV1"));
    });
  }
  for (std::thread& t : threads) t.join();
  const int won = (results[0]->ok() ? 1 : 0) + (results[1]->ok() ? 1 : 0);
  EXPECT_EQ(won, 1) << "exactly one compare-and-swap succeeds";
  const size_t winner = results[0]->ok() ? 0 : 1;
  const std::string winner_slug = winner == 0 ? "dGreetV2" : "dGreetV3";
  EXPECT_THAT(results[1 - winner]->status(),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr("points to \"" + winner_slug + "\"")));
  EXPECT_EQ(active_version("dGreet"), winner_slug);
}

}  // namespace
}  // namespace pgflow
