// The `pgflow` program against the real embedded PostgreSQL: `pgflow flows` lists every flow's
// alias, queue mode and route with the live workers of each queue (the post-deploy coverage
// check); `pgflow aliases` lists aliases with their versions; `pgflow activate` switches an
// alias by compare-and-swap; `pgflow run cancel|retry|resume` controls runs.
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "testing/command.h"
#include "testing/database_test.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;
using pgflow::testing::CommandResult;
using pgflow::testing::run_command;
using pgflow::testing::shell_quote;

class CliTest : public pgflow::testing::DatabaseTest {
 protected:
  CommandResult pgflow(const std::string& args) {
    return run_command(absl::StrCat(PGFLOW_CLI_BIN, " ", args, " --database ", shell_quote(db_->url())));
  }
  // One step of a flow shape.
  // A worker's startup deployment of one-step flow `flow` under alias `alias`.
  void deploy(const std::string& flow, const std::string& alias) {
    sql(absl::StrCat("select pgflow.ensure_flow_compiled($1, '{\"steps\": [", step("greet"),
                     "]}', pgflow.worker_protocol(), 'flow', null, $2)"),
        {flow, alias});
  }
  static std::string step(const std::string& slug, const std::string& deps = "") {
    return absl::StrCat(R"({"slug": ")", slug, R"(", "stepType": "single", "dependencies": [)", deps,
                        R"(], "whenUnmet": "skip", "whenExhausted": "fail",
                            "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}})");
  }
};

TEST_F(CliTest, FlowsListsQueueModesRoutesAndLiveWorkersPerQueue) {
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('orders', '{\"steps\": [", step("pay"), ",",
                   step("ship", "\"pay\""), "]}', pgflow.worker_protocol(), 'step')"));
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('plain', '{\"steps\": [", step("only"),
                   "]}', pgflow.worker_protocol())"));
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', 'orders__pay', "
      "pgflow.worker_protocol())");
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', 'orders__pay', "
      "pgflow.worker_protocol())");
  // A stopped worker and one whose heartbeat is old do not count.
  sql("select pgflow.mark_worker_stopped((pgflow.register_worker(gen_random_uuid(), 'plain-worker', 'plain', "
      "'plain', pgflow.worker_protocol())).worker_id)");
  const std::string old = sql("select worker_id from pgflow.register_worker(gen_random_uuid(), 'plain-worker', "
                              "'plain', 'plain', pgflow.worker_protocol())");
  sql("update pgflow.workers set last_heartbeat_at = now() - interval '1 hour' where worker_id = $1::uuid", {old});

  CommandResult listed = pgflow("flows --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(json::parse(listed.out), json::parse(R"([
    {"flow_slug": "orders", "flow_alias": "orders", "active": true, "queue_mode": "step", "routes": [
      {"step_slug": "pay", "queue_name": "orders__pay", "live_workers": 2},
      {"step_slug": "ship", "queue_name": "orders__ship", "live_workers": 0}]},
    {"flow_slug": "plain", "flow_alias": "plain", "active": true, "queue_mode": "flow", "routes": [
      {"step_slug": "only", "queue_name": "plain", "live_workers": 0}]}])"));

  CommandResult table = pgflow("flows");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("FLOW"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("orders +orders +active +step +pay +orders__pay +2"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\n +ship +orders__ship +0"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("plain +plain +active +flow +only +plain +0"));
}

// Versions greetV1 (active) and greetV2 of alias "greet".
TEST_F(CliTest, AliasesListActiveVersionsAndMembers) {
  deploy("greetV1", "greet");
  deploy("greetV2", "greet");
  deploy("solo", "solo");
  CommandResult listed = pgflow("aliases --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  json aliases = json::parse(listed.out);
  ASSERT_EQ(aliases.size(), 2u);
  for (json& a : aliases) {
    EXPECT_TRUE(a["updated_at"].is_string());
    a.erase("updated_at");
  }
  EXPECT_EQ(aliases, json::parse(R"([
    {"alias": "greet", "active_flow_slug": "greetV1", "versions": ["greetV1", "greetV2"]},
    {"alias": "solo", "active_flow_slug": "solo", "versions": ["solo"]}])"));

  CommandResult table = pgflow("aliases");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::ContainsRegex("ALIAS +ACTIVE +VERSIONS"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("greet +greetV1 +greetV1, greetV2"));

  CommandResult flows = pgflow("flows");
  ASSERT_EQ(flows.exit_code, 0) << flows.err;
  EXPECT_THAT(flows.out, ::testing::ContainsRegex("greetV2 +greet +inactive +flow"));
}

TEST_F(CliTest, ActivateSwitchesWithCompareAndSwap) {
  deploy("greetV1", "greet");
  deploy("greetV2", "greet");
  CommandResult stale = pgflow("activate greet greetV2 --expected greetV2");
  EXPECT_EQ(stale.exit_code, 1);
  EXPECT_THAT(stale.err, HasSubstr("points to \"greetV1\", not to the expected \"greetV2\"; nothing changed"));
  EXPECT_EQ(sql("select flow_slug from pgflow.flow_aliases where flow_alias = 'greet'"), "greetV1");

  CommandResult switched = pgflow("activate greet greetV2 --expected greetV1");
  ASSERT_EQ(switched.exit_code, 0) << switched.err;
  EXPECT_EQ(switched.out, "alias greet now starts greetV2 (was greetV1)\n");
  EXPECT_EQ(sql("select flow_slug from pgflow.flow_aliases where flow_alias = 'greet'"), "greetV2");

  CommandResult rollback = pgflow("activate greet greetV1 --expected=greetV2");
  ASSERT_EQ(rollback.exit_code, 0) << rollback.err;
  EXPECT_EQ(sql("select flow_slug from pgflow.flow_aliases where flow_alias = 'greet'"), "greetV1");

  CommandResult initialised = pgflow("activate greet greetV2 --expected-none");
  EXPECT_EQ(initialised.exit_code, 1);
  EXPECT_THAT(initialised.err, HasSubstr("points to \"greetV1\", not to the expected no version"));
}

TEST_F(CliTest, ActivateChecksItsArguments) {
  for (const char* args : {"activate greet", "activate greet greetV2", "activate greet greetV2 extra --expected x",
                           "activate greet greetV2 --expected greetV1 --expected-none"}) {
    CommandResult r = pgflow(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("usage: pgflow")) << args;
  }
  EXPECT_THAT(pgflow("activate greet greetV2").err, HasSubstr("exactly one of --expected CURRENT"));
  EXPECT_THAT(pgflow("activate greet greetV2 extra --expected x").err, HasSubstr("unexpected argument extra"));
}

TEST_F(CliTest, RunCancelRetryAndResume) {
  deploy("greet", "greet");
  const std::string run = sql("select pgflow.start_run('greet', '{}')::text");
  CommandResult cancelled = pgflow("run cancel " + run + " --reason 'operator says so'");
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_EQ(cancelled.out, "run " + run + " cancelled\n");
  EXPECT_EQ(sql("select cancel_reason from pgflow.runs where run_id = $1::uuid", {run}), "operator says so");
  CommandResult again = pgflow("run cancel " + run);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "run " + run + " had already finished: nothing changed\n");

  const std::string new_id = "00000000-0000-0000-0000-0000000000b1";
  CommandResult retried = pgflow("run retry " + run + " --new-run-id " + new_id);
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(retried.out, "run " + run + " retried as run " + new_id + "\n");
  EXPECT_EQ(sql("select restart_of_run_id from pgflow.runs where run_id = $1::uuid", {new_id}), run);

  CommandResult resumed = pgflow("run resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "run " + run + " resumed: started\n");
  CommandResult refused = pgflow("run resume " + run);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("only a failed or cancelled run can be resumed"));
}

TEST_F(CliTest, RunChecksItsArguments) {
  for (const char* args : {"run", "run cancel", "run stop 00000000-0000-0000-0000-000000000001",
                           "run retry 00000000-0000-0000-0000-000000000001 --reason x",
                           "run cancel 00000000-0000-0000-0000-000000000001 --new-run-id x"}) {
    CommandResult r = pgflow(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr("usage: pgflow")) << args;
  }
  EXPECT_THAT(pgflow("run stop 00000000-0000-0000-0000-000000000001").err, HasSubstr("unknown run action stop"));
  EXPECT_THAT(pgflow("run retry 00000000-0000-0000-0000-000000000001 --reason x").err,
              HasSubstr("--reason is for run cancel"));
  CommandResult unknown = pgflow("run cancel 00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("Run \"00000000-0000-0000-0000-000000000001\" does not exist"));
}

TEST_F(CliTest, MigrateAdoptsASchemaInstalledByUpstreamsTooling) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh, pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) {
    return run_command(absl::StrCat(PGFLOW_CLI_BIN, " ", args, " --database ", shell_quote(fresh.url())));
  };
  ASSERT_EQ(on_fresh("migrate --to 1").exit_code, 0);
  // What upstream's tooling leaves: the schema without our ledger.
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(fresh.url()));
  ASSERT_TRUE(conn.exec("drop table pgflow.schema_migrations").ok());
  CommandResult refused = on_fresh("migrate");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("pgflow migrate --adopt"));
  EXPECT_EQ(on_fresh("migrate --adopt=maybe").exit_code, 2);

  CommandResult adopted = on_fresh("migrate --adopt");
  EXPECT_EQ(adopted.exit_code, 0) << adopted.err;
  CommandResult status = on_fresh("status");
  EXPECT_THAT(status.out, HasSubstr("0001_core.sql"));
  EXPECT_THAT(status.out, HasSubstr("(adopted: an existing schema verified equal to it)"));
  EXPECT_THAT(status.out, HasSubstr("up to date"));
}

TEST_F(CliTest, FlowsRefusesAValueForTheJsonSwitch) {
  CommandResult r = pgflow("flows --json=maybe");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--json takes no value"));
  CommandResult table = pgflow("aliases --json=false");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ALIAS")) << "--json=false is the table";
}

}  // namespace
}  // namespace pgflow
