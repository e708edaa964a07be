// The `pgflow` program against the real embedded PostgreSQL, every subcommand: migrate
// (--dry-run, --adopt), status (--metrics), audit, flows, flow show, aliases, activate, runs,
// run show|cancel|retry|resume, start (--wait), workers (pause|resume|deprecate) and prune;
// --json output parsed back; bad arguments (exit 2, naming the argument); a database without
// the schema.
#include <atomic>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/context.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"
#include "testing/command.h"
#include "testing/database_test.h"
#include "testing/status_matchers.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::CommandResult;
using pgflow::testing::run_command;
using pgflow::testing::shell_quote;
using pgflow::testing::test_worker_config;
using pgflow::testing::wait_for;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

class CliTest : public pgflow::testing::DatabaseTest {
 protected:
  CommandResult pgflow(const std::string& args) { return pgflow_at(db_->url(), args); }
  static CommandResult pgflow_at(const std::string& url, const std::string& args) {
    return run_command(absl::StrCat(PGFLOW_CLI_BIN, " ", args, " --database ", shell_quote(url)));
  }
  // `args` refused as bad usage: exit 2, a message naming `names` with the pointer to --help,
  // nothing on stdout.
  CommandResult expect_usage_error(const std::string& args, const std::string& names) {
    CommandResult r = pgflow(args);
    EXPECT_EQ(r.exit_code, 2) << args;
    EXPECT_THAT(r.err, HasSubstr(names)) << args;
    EXPECT_THAT(r.err, HasSubstr("--help` for usage.")) << args;
    EXPECT_THAT(r.out, ::testing::IsEmpty()) << args;
    return r;
  }
  // One step of a flow shape.
  // A worker's startup deployment of one-step flow `flow` under alias `alias`.
  void deploy(const std::string& flow, const std::string& alias) {
    sql(absl::StrCat("select pgflow.ensure_flow_compiled($1, '{\"steps\": [", step("greet"),
                     "]}', pgflow.worker_protocol(), 'flow', null, $2)"),
        {flow, alias});
  }
  static std::string step(const std::string& slug, const std::string& deps = "") {
    return absl::StrCat(R"({"slug": ")", slug, R"(", "stepType": "single", "dependencies": [)",
                        deps,
                        R"(], "whenUnmet": "skip", "whenExhausted": "fail",
                            "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}})");
  }
};

TEST_F(CliTest, FlowsListsQueueModesRoutesAndLiveWorkersPerQueue) {
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('orders', '{\"steps\": [", step("pay"), ",",
                   step("ship", "\"pay\""), "]}', pgflow.worker_protocol(), 'step')"));
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('plain', '{\"steps\": [", step("only"),
                   "]}', pgflow.worker_protocol())"));
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', "
      "'orders__pay', "
      "pgflow.worker_protocol())");
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', "
      "'orders__pay', "
      "pgflow.worker_protocol())");
  // A stopped worker and one whose heartbeat is old do not count.
  sql("select pgflow.mark_worker_stopped((pgflow.register_worker(gen_random_uuid(), "
      "'plain-worker', 'plain', "
      "'plain', pgflow.worker_protocol())).worker_id)");
  const std::string old =
      sql("select worker_id from pgflow.register_worker(gen_random_uuid(), 'plain-worker', "
          "'plain', 'plain', pgflow.worker_protocol())");
  sql("update pgflow.workers set last_heartbeat_at = now() - interval '1 hour' where worker_id = "
      "$1::uuid",
      {old});

  CommandResult listed = pgflow("flows --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  sql("select pgflow.start_run('orders', '{}')");
  EXPECT_EQ(json::parse(listed.out), json::parse(R"([
    {"flow_slug": "orders", "flow_alias": "orders", "active": true, "queue_mode": "step", "step_count": 2,
     "runs": {"started": 0, "completed": 0, "failed": 0}, "routes": [
      {"step_slug": "pay", "queue_name": "orders__pay", "live_workers": 2},
      {"step_slug": "ship", "queue_name": "orders__ship", "live_workers": 0}]},
    {"flow_slug": "plain", "flow_alias": "plain", "active": true, "queue_mode": "flow", "step_count": 1,
     "runs": {"started": 0, "completed": 0, "failed": 0}, "routes": [
      {"step_slug": "only", "queue_name": "plain", "live_workers": 0}]}])"));

  CommandResult table = pgflow("flows");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, ::testing::ContainsRegex(
                             "FLOW +ALIAS +STATE +MODE +STEPS +RUNS STARTED +COMPLETED +FAILED"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("orders +orders +active +step +2 +1 +0 +0"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("plain +plain +active +flow +1 +0 +0 +0"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("orders +pay +orders__pay +2"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("orders +ship +orders__ship +0"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("plain +only +plain +0"));
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
  EXPECT_THAT(stale.err,
              HasSubstr("points to \"greetV1\", but \"greetV2\" was expected; nothing changed"));
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
  EXPECT_THAT(initialised.err,
              HasSubstr("points to \"greetV1\", but no active version was expected"));
}

TEST_F(CliTest, ActivateChecksItsArguments) {
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c :
       {Case{"activate greet", "SLUG is required"},
        Case{"activate greet greetV2", "activate needs --expected CURRENT"},
        Case{"activate greet greetV2 extra --expected x", "extra"},
        Case{"activate greet greetV2 --expected greetV1 --expected-none", "--expected-none"},
        // Given, but false: it says nothing, so neither is given (before, it meant "expect none").
        Case{"activate greet greetV2 --expected-none=false", "activate needs --expected CURRENT"},
        Case{"activate greet-v2 greetV2 --expected-none", "ALIAS"}}) {
    EXPECT_THAT(expect_usage_error(c.args, c.names).err,
                HasSubstr("Run `pgflow activate --help` for usage."))
        << c.args;
  }
}

TEST_F(CliTest, RunCancelRetryAndResume) {
  deploy("greet", "greet");
  const std::string run = sql("select pgflow.start_run('greet', '{}')::text");
  CommandResult cancelled = pgflow("run cancel " + run + " --reason 'operator says so'");
  ASSERT_EQ(cancelled.exit_code, 0) << cancelled.err;
  EXPECT_EQ(cancelled.out, "run " + run + " cancelled\n");
  EXPECT_EQ(sql("select cancel_reason from pgflow.runs where run_id = $1::uuid", {run}),
            "operator says so");
  CommandResult again = pgflow("run cancel " + run);
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, "run " + run + " had already finished: nothing changed\n");

  const std::string new_id = "00000000-0000-0000-0000-0000000000b1";
  CommandResult retried = pgflow("run retry " + run + " --new-run-id " + new_id);
  ASSERT_EQ(retried.exit_code, 0) << retried.err;
  EXPECT_EQ(retried.out, "run " + run + " retried as run " + new_id + "\n");
  EXPECT_EQ(sql("select restart_of_run_id from pgflow.runs where run_id = $1::uuid", {new_id}),
            run);

  CommandResult resumed = pgflow("run resume " + run);
  ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
  EXPECT_EQ(resumed.out, "run " + run + " resumed: started\n");
  CommandResult refused = pgflow("run resume " + run);
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("only a failed or cancelled run can be resumed"));
}

TEST_F(CliTest, RunChecksItsArguments) {
  struct Case {
    const char* args;
    const char* names;
  };
  for (const Case& c :
       {Case{"run", "subcommand"}, Case{"run cancel", "RUN_ID is required"},
        Case{"run stop 00000000-0000-0000-0000-000000000001", "stop"},
        Case{"run retry 00000000-0000-0000-0000-000000000001 --reason x", "--reason"},
        Case{"run cancel 00000000-0000-0000-0000-000000000001 --new-run-id x", "--new-run-id"},
        Case{"run cancel 42", "RUN_ID"},
        Case{"run signal 00000000-0000-0000-0000-000000000001 approve s --task-index -1",
             "--task-index"},
        Case{"run signal 00000000-0000-0000-0000-000000000001 approve ''", "SIGNAL_ID"},
        Case{"run signal 00000000-0000-0000-0000-000000000001 no-slug s", "STEP"},
        Case{"run signal 00000000-0000-0000-0000-000000000001 approve s --payload '{'",
             "--payload"}}) {
    expect_usage_error(c.args, c.names);
  }
  CommandResult unknown = pgflow("run cancel 00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err,
              HasSubstr("Run \"00000000-0000-0000-0000-000000000001\" does not exist"));
  // Every spelling PostgreSQL's uuid type (and so the library) reads is a run id here too.
  for (const char* spelling :
       {"00000000000000000000000000000001", "'{00000000-0000-0000-0000-000000000001}'"}) {
    CommandResult r = pgflow(absl::StrCat("run cancel ", spelling));
    EXPECT_EQ(r.exit_code, 1) << spelling << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr("does not exist")) << spelling;
  }
}

TEST_F(CliTest, MigrateAdoptsASchemaInstalledByUpstreamsTooling) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh,
                              pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) { return pgflow_at(fresh.url(), args); };
  ASSERT_EQ(on_fresh("migrate --to 1").exit_code, 0);
  // What upstream's tooling leaves: the schema without our ledger.
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(fresh.url()));
  ASSERT_TRUE(conn.exec("drop table pgflow.schema_migrations").ok());
  CommandResult refused = on_fresh("migrate");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_THAT(refused.err, HasSubstr("pgflow migrate --adopt"));
  CommandResult dry = on_fresh("migrate --dry-run");
  EXPECT_EQ(dry.exit_code, 1) << "the dry run refuses what the run refuses";
  EXPECT_THAT(dry.err, HasSubstr("pgflow migrate --adopt"));
  EXPECT_EQ(on_fresh("migrate --dry-run --adopt").exit_code, 0);
  EXPECT_EQ(on_fresh("migrate --adopt=maybe").exit_code, 2);

  CommandResult adopted = on_fresh("migrate --adopt");
  EXPECT_EQ(adopted.exit_code, 0) << adopted.err;
  CommandResult status = on_fresh("status");
  EXPECT_THAT(status.out, HasSubstr("0001_core.sql"));
  EXPECT_THAT(status.out, HasSubstr("(adopted: an existing schema verified equal to it)"));
  EXPECT_THAT(status.out, HasSubstr("up to date"));
}

TEST_F(CliTest, FlowsRefusesAValueForTheJsonSwitch) {
  expect_usage_error("flows --json=maybe", "--json");
  CommandResult table = pgflow("aliases --json=false");
  EXPECT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("ALIAS")) << "--json=false is the table";
}

// ---- the operator commands (#17) ----

// A map over the input and a sum: `run show` has a map step with progress to show.
const auto kSum = Flow<"cliSum", std::vector<int>>()
                      .map<"double">([](int x) { return 2 * x; })
                      .step<"total">(after<"double">, [](const std::vector<int>& doubled) {
                        int total = 0;
                        for (int x : doubled) total += x;
                        return total;
                      });
// Fails on its only attempt.
const auto kBoom = Flow<"cliBoom", int>({.max_attempts = 1}).step<"explode">([](int) -> int {
  throw std::runtime_error("it blew up");
});

TEST_F(CliTest, HelpListsEveryCommandAndEachCommandsOptions) {
  CommandResult help = run_command(absl::StrCat(PGFLOW_CLI_BIN, " --help"));
  ASSERT_EQ(help.exit_code, 0) << help.err;
  for (const char* command : {"migrate", "status", "audit", "flows", "flow", "aliases", "activate",
                              "runs", "run", "start", "workers", "prune"}) {
    EXPECT_THAT(help.out, ::testing::ContainsRegex(absl::StrCat("\n  ", command, " +[a-z]")))
        << command;
  }
  EXPECT_THAT(help.out, HasSubstr("Exit status"));
  struct Case {
    const char* command;
    const char* option;
  };
  for (const Case& c :
       {Case{"migrate", "--dry-run"}, Case{"status", "--metrics"}, Case{"flow show", "SLUG"},
        Case{"runs", "--since"}, Case{"run show", "RUN_ID"}, Case{"start", "--wait"},
        Case{"workers", "--all"}, Case{"workers pause", "--reason"}, Case{"prune", "--older-than"},
        Case{"activate", "--expected-none"}}) {
    CommandResult r = run_command(absl::StrCat(PGFLOW_CLI_BIN, " ", c.command, " --help"));
    EXPECT_EQ(r.exit_code, 0) << c.command;
    EXPECT_THAT(r.out, HasSubstr(c.option)) << c.command;
    EXPECT_THAT(r.out, HasSubstr("--database")) << c.command;
    EXPECT_THAT(r.out, HasSubstr("--json")) << c.command;
  }
}

TEST_F(CliTest, BadArgumentsExitTwoNamingTheArgument) {
  struct Case {
    const char* args;
    const char* names;
  };
  const std::string long_key =
      absl::StrCat("start cliSum --idempotency-key ", std::string(256, 'k'));
  for (const Case& c :
       {Case{"frobnicate", "frobnicate"},
        Case{"migrate --to 0", "--to"},
        Case{"migrate --databse x", "--databse"},
        Case{"flow show", "SLUG is required"},
        Case{"runs --status sleeping", "--status"},
        Case{"runs --since yesterday", "--since"},
        Case{"runs --limit 0", "--limit"},
        Case{"run show not-a-uuid", "RUN_ID"},
        Case{"start", "FLOW is required"},
        Case{"start cliSum --input '[1,'", "--input"},
        Case{"start cliSum --timeout 5s", "--timeout"},
        Case{"start cliSum --wait --timeout soon", "--timeout"},
        Case{"workers pause", "FUNCTION is required"},
        Case{"workers deprecate", "TARGET is required"},
        Case{"prune", "--older-than is required"},
        Case{"prune --older-than 14", "--older-than"},
        Case{"prune --older-than -1d", "--older-than"},
        Case{"prune --older-than 0.0001ms", "--older-than"},
        Case{"prune --older-than 5300w", "--older-than"},
        Case{"runs --since 400000w", "--since"},
        Case{"start my-flow", "FLOW"},
        Case{"flow show 'a b'", "SLUG"},
        Case{"runs --flow 'x;y'", "--flow"},
        Case{long_key.c_str(), "--idempotency-key: must be 1 to 255 characters, not 256"}}) {
    expect_usage_error(c.args, c.names);
  }
  CommandResult nothing =
      run_command(absl::StrCat("env -u DATABASE_URL ", PGFLOW_CLI_BIN, " flows"));
  EXPECT_EQ(nothing.exit_code, 2);
  EXPECT_THAT(nothing.err,
              HasSubstr("no database: --database is empty and DATABASE_URL is not set"));
  CommandResult from_env = run_command(
      absl::StrCat("DATABASE_URL=", shell_quote(db_->url()), " ", PGFLOW_CLI_BIN, " flows --json"));
  EXPECT_EQ(from_env.exit_code, 0) << from_env.err;
}

TEST_F(CliTest, ADatabaseWithoutTheSchemaIsNamedAndLeftAlone) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh,
                              pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) { return pgflow_at(fresh.url(), args); };
  for (const char* args :
       {"flows", "flow show x", "aliases", "runs", "run show 00000000-0000-0000-0000-000000000001",
        "start x", "workers", "workers pause f", "workers deprecate f", "prune --older-than 1d",
        "status --metrics", "activate a b --expected-none",
        "run cancel 00000000-0000-0000-0000-000000000001"}) {
    CommandResult r = on_fresh(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_EQ(r.err,
              "pgflow: the database has no pgflow schema: run `pgflow migrate` to install it\n")
        << args << ": every command says it in the same words";
  }
  CommandResult status = on_fresh("status --json");
  ASSERT_EQ(status.exit_code, 0) << status.err;
  json s = json::parse(status.out);
  EXPECT_EQ(s["schema_version"], 0);
  EXPECT_EQ(s["pgmq_mode"], "missing");
  EXPECT_EQ(s["realtime"], "off");
  EXPECT_EQ(s["pending"].size(), s["library_version"].get<size_t>());
  CommandResult audit = on_fresh("audit");
  EXPECT_EQ(audit.exit_code, 0) << audit.err;
  EXPECT_THAT(audit.out,
              HasSubstr("the database has no pgflow schema: run `pgflow migrate` to install it "
                        "(0001_core.sql first); nothing to audit"));

  CommandResult dry = on_fresh("migrate --dry-run --json");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  json d = json::parse(dry.out);
  EXPECT_EQ(d["installs_pgmq"], true);
  ASSERT_EQ(d["would_apply"].size(), s["library_version"].get<size_t>());
  EXPECT_EQ(d["would_apply"][0]["file"], "0001_core.sql");
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(fresh.url()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result schemas,
      conn.exec("select count(*) from pg_namespace where nspname in ('pgflow', 'pgmq')"));
  EXPECT_EQ(schemas.scalar(), "0") << "a dry run changes nothing";
}

// A ledger migrate refuses (here: newer than this library) is what status and audit say, with
// exit 3, instead of "up to date".
TEST_F(CliTest, StatusAndAuditSayWhatMigrateWouldRefuse) {
  sql("insert into pgflow.schema_migrations (version, name, checksum) values (9999, 'future', "
      "'x')");
  CommandResult status = pgflow("status");
  EXPECT_EQ(status.exit_code, 3) << status.err;
  EXPECT_THAT(status.out, HasSubstr("migrate refuses this database: "));
  EXPECT_THAT(status.out, HasSubstr("newer than this library"));
  EXPECT_THAT(status.out, Not(HasSubstr("up to date")));
  CommandResult as_json = pgflow("status --json");
  EXPECT_EQ(as_json.exit_code, 3);
  EXPECT_THAT(json::parse(as_json.out, nullptr, false).value("problem", ""),
              HasSubstr("newer than this library"));
  CommandResult audit = pgflow("audit");
  EXPECT_EQ(audit.exit_code, 3);
  EXPECT_THAT(audit.out, HasSubstr("migrate refuses this database"));
}

TEST_F(CliTest, MigrateDryRunListsWhatWouldRunUpToTheTarget) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh,
                              pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) { return pgflow_at(fresh.url(), args); };
  ASSERT_EQ(on_fresh("migrate --to 1").exit_code, 0);
  CommandResult dry = on_fresh("migrate --dry-run --to 3");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  EXPECT_THAT(
      dry.out,
      HasSubstr("would apply  0002_queue_identity.sql\nwould apply  0003_readable_core.sql\n("));
  EXPECT_THAT(dry.out, HasSubstr("dry run: nothing changed"));
  CommandResult status = on_fresh("status --json");
  EXPECT_EQ(json::parse(status.out)["schema_version"], 1);
  CommandResult migrated = on_fresh("migrate --json");
  ASSERT_EQ(migrated.exit_code, 0) << migrated.err;
  json m = json::parse(migrated.out);
  EXPECT_EQ(m["schema_version"], m["library_version"]);
  EXPECT_TRUE(m["pending"].empty());
  CommandResult nothing = on_fresh("migrate --dry-run");
  EXPECT_THAT(nothing.out, HasSubstr("nothing to apply: up to date"));
  // What the run would refuse, the dry run refuses: an applied migration edited since.
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(fresh.url()));
  ASSERT_TRUE(
      conn.exec("update pgflow.schema_migrations set checksum = 'x' where version = 1").ok());
  CommandResult edited = on_fresh("migrate --dry-run");
  EXPECT_EQ(edited.exit_code, 1);
  EXPECT_THAT(edited.err, HasSubstr("applied migration 0001_core.sql differs"));
  EXPECT_THAT(edited.out, ::testing::Not(HasSubstr("nothing to apply")));
}

TEST_F(CliTest, AuditReportsWhatTheNextMigrationWouldRefuse) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh,
                              pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) { return pgflow_at(fresh.url(), args); };
  ASSERT_EQ(on_fresh("migrate --to 1").exit_code, 0);
  CommandResult clean = on_fresh("audit --json");
  ASSERT_EQ(clean.exit_code, 0) << clean.err;
  json report = json::parse(clean.out);
  EXPECT_EQ(report["migration"], 2);
  ASSERT_FALSE(report["findings"].empty());
  EXPECT_EQ(report["findings"][0]["severity"], "info");
  EXPECT_EQ(report["findings"][0]["category"], "backfill");

  // A flow slug the queue-identity rules refuse (legal in 0001).
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(fresh.url()));
  ASSERT_TRUE(conn.exec("insert into pgflow.flows (flow_slug) values ('bad__slug')").ok());
  CommandResult refused = on_fresh("audit");
  EXPECT_EQ(refused.exit_code, 3) << refused.err;
  EXPECT_THAT(refused.out, ::testing::ContainsRegex("error +invalid_flow_slug +\\(bad__slug\\)"));
  EXPECT_THAT(refused.out, HasSubstr("error(s): the upgrade would refuse until they are fixed"));
  CommandResult as_json = on_fresh("audit --json");
  EXPECT_EQ(as_json.exit_code, 3);
  json errors = json::parse(as_json.out)["findings"];
  EXPECT_EQ(errors[0]["severity"], "error");
  EXPECT_EQ(errors[0]["flow_slug"], "bad__slug");
  EXPECT_THAT(pgflow("audit").out, HasSubstr("up to date: nothing to audit"));
}

TEST_F(CliTest, AuditNamesTheNextPendingMigrationThatHasOne) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(pgflow::testing::TestDatabase fresh,
                              pgflow::testing::TestDatabase::empty());
  auto on_fresh = [&](const std::string& args) { return pgflow_at(fresh.url(), args); };
  ASSERT_EQ(on_fresh("migrate --to 5").exit_code, 0);
  // 0012's audit reads the schema as it is at 0011: from 0005 it cannot run yet, and the
  // migrations before it need nothing.
  CommandResult early = on_fresh("audit");
  EXPECT_EQ(early.exit_code, 0) << early.err;
  EXPECT_THAT(early.out,
              HasSubstr("no preparation is needed for 0006_batch_results.sql to "
                        "0011_least_privilege_queues.sql; 0012_role_boundaries.sql has an "
                        "upgrade audit, which runs at schema version 11: `pgflow migrate --to "
                        "11`, then `pgflow audit`"));
  CommandResult early_json = on_fresh("audit --json");
  ASSERT_EQ(early_json.exit_code, 0) << early_json.err;
  EXPECT_EQ(json::parse(early_json.out)["migration"], 12);
  EXPECT_TRUE(json::parse(early_json.out)["findings"].empty());

  ASSERT_EQ(on_fresh("migrate --to 11").exit_code, 0);
  CommandResult at_11 = on_fresh("audit");
  EXPECT_EQ(at_11.exit_code, 0) << at_11.err;
  EXPECT_THAT(at_11.out, HasSubstr("audit of 0012_role_boundaries.sql (read-only)"));
  EXPECT_THAT(at_11.out, HasSubstr("no errors: the upgrade can run"));

  ASSERT_EQ(on_fresh("migrate --to 12").exit_code, 0);
  CommandResult later = on_fresh("audit --json");
  ASSERT_EQ(later.exit_code, 0) << later.err;
  json none = json::parse(later.out);
  EXPECT_EQ(none["migration"], 13);
  EXPECT_THAT(none["summary"].get<std::string>(),
              ::testing::MatchesRegex("no preparation is needed for 0013_one_rule_each.sql to "
                                      "[0-9]{4}_[a-z_]+\\.sql: no pending migration has an "
                                      "upgrade audit \\(docs/upgrading.md\\)"));
}

TEST_F(CliTest, FlowShowPrintsStepsAsATreeWithOptionsAndConditions) {
  sql(absl::StrCat(
      R"(select pgflow.ensure_flow_compiled('shop', '{"steps": [)", step("load"), ",",
      R"({"slug": "items", "stepType": "map", "dependencies": ["load"], "whenUnmet": "skip",
                       "whenExhausted": "skip", "options": {"maxAttempts": 7},
                       "requiredInputPattern": {"defined": true, "value": {"vip": true}},
                       "forbiddenInputPattern": {"defined": false}},)",
      step("report", R"("load", "items")"), R"(]}', pgflow.worker_protocol()))"));
  CommandResult shown = pgflow("flow show shop --json");
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  json flow = json::parse(shown.out);
  EXPECT_EQ(flow["flow_slug"], "shop");
  EXPECT_EQ(flow["queue_mode"], "flow");
  ASSERT_EQ(flow["steps"].size(), 3u);
  EXPECT_EQ(flow["steps"][1]["step_type"], "map");
  EXPECT_EQ(flow["steps"][1]["options"]["max_attempts"], 7);
  EXPECT_EQ(flow["steps"][1]["required_input_pattern"], json({{"vip", true}}));
  EXPECT_EQ(flow["steps"][1]["when_exhausted"], "skip");
  EXPECT_EQ(flow["steps"][2]["dependencies"], json({"load", "items"}));

  CommandResult tree = pgflow("flow show shop");
  ASSERT_EQ(tree.exit_code, 0) << tree.err;
  EXPECT_THAT(tree.out, HasSubstr("flow shop  (alias shop, active version; one queue per flow)"));
  EXPECT_THAT(tree.out, HasSubstr("\n  load  [single step; queue shop]\n"));
  EXPECT_THAT(tree.out,
              HasSubstr("\n  └─ items  [map step; queue shop; max_attempts 7; if input contains "
                        "{\"vip\":true}; when unmet: skip; when retries are exhausted: skip]\n"));
  EXPECT_THAT(tree.out,
              HasSubstr("\n     └─ report (after load, items)  [single step; queue shop]\n"));

  CommandResult unknown = pgflow("flow show nope");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("no flow or alias \"nope\""));
}

TEST_F(CliTest, StartWaitsForTheRunAndItsExitStatusSaysHowItEnded) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker sum_worker,
                              EdgeWorker::start(kSum, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker boom_worker,
                              EdgeWorker::start(kBoom, test_worker_config(db_->url())));

  CommandResult done = pgflow("start cliSum --input '[1, 2, 3]' --wait --json");
  ASSERT_EQ(done.exit_code, 0) << done.err;
  json run = json::parse(done.out);
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], json({{"total", 12}})) << "a run's output holds its leaf steps' outputs";
  EXPECT_EQ(run["steps"][0]["tasks_total"], 3);
  EXPECT_EQ(run["steps"][0]["tasks_completed"], 3);
  EXPECT_THAT(done.err, ::testing::IsEmpty()) << "no progress output when stderr is not a terminal";

  CommandResult shown = pgflow("run show " + run["run_id"].get<std::string>());
  ASSERT_EQ(shown.exit_code, 0) << shown.err;
  EXPECT_THAT(shown.out, ::testing::ContainsRegex("run [-0-9a-f]+  flow cliSum  completed after "));
  EXPECT_THAT(shown.out, ::testing::ContainsRegex(
                             "double +map +completed +1 +[-0-9: Z]+ +[0-9.a-z ]+ +\\[#+\\] 3/3"));
  EXPECT_THAT(shown.out, HasSubstr("output: {\"total\":12}"));

  CommandResult failed = pgflow("start cliBoom --input 1 --wait");
  EXPECT_EQ(failed.exit_code, 3) << failed.err;
  EXPECT_THAT(failed.out, ::testing::ContainsRegex("explode +single +failed +1 .*it blew up"));

  CommandResult started = pgflow("start cliSum --input '[5]' --json");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  EXPECT_EQ(json::parse(started.out)["flow_slug"], "cliSum");
  CommandResult unknown = pgflow("start noSuchFlow --wait");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("noSuchFlow"));
}

// With only a starter's rights (it may start and read runs through pgflow's functions, not read
// its tables) `start --wait` still says how the run ended, without the step table.
TEST_F(CliTest, StartWaitAsAStarterReportsTheOutcome) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker sum_worker,
                              EdgeWorker::start(kSum, test_worker_config(db_->url())));
  const std::string database = sql("select current_database()");
  const std::string superuser = sql("select current_user");
  const std::string starter = "cli_starter_" + database;
  // What sql/contrib/grants.sql gives pgflow_starter and the CLI's start uses.
  ASSERT_TRUE(conn_
                  ->exec_script("create role " + starter +
                                " login; grant usage on schema pgflow to " + starter +
                                "; grant execute on function pgflow.start_flow_with_states(text, "
                                "jsonb, uuid), pgflow.get_run_with_states(uuid) to " +
                                starter + ";")
                  .ok());
  std::string url = db_->url();
  ASSERT_NE(url.find(superuser + "@"), std::string::npos) << url;
  url.replace(url.find(superuser + "@"), superuser.size(), starter);
  ASSERT_EQ(pgflow_at(url, "run show 00000000-0000-0000-0000-000000000001").exit_code, 1)
      << "the role cannot read pgflow's tables";

  CommandResult as_json = pgflow_at(url, "start cliSum --input '[1, 2]' --wait --json");
  ASSERT_EQ(as_json.exit_code, 0) << as_json.err;
  json run = json::parse(as_json.out);
  EXPECT_EQ(run["status"], "completed");
  EXPECT_EQ(run["output"], json({{"total", 6}}));
  EXPECT_FALSE(run.contains("steps"));
  EXPECT_EQ(run["steps_unavailable"], "the step table needs read access to pgflow's tables");
  CommandResult text = pgflow_at(url, "start cliSum --input '[1]' --wait");
  ASSERT_EQ(text.exit_code, 0) << text.err;
  EXPECT_THAT(text.out, ::testing::ContainsRegex("run [-0-9a-f]+  flow cliSum  completed\n"
                                                 "output: \\{\"total\":2\\}\n"));
  EXPECT_THAT(text.out, HasSubstr("the step table needs read access to pgflow's tables"));
  (void)conn_->exec_script("drop owned by " + starter + "; drop role " + starter + ";");
}

// --idempotency-key: the first start creates the run, a repeat finds it, says so on stderr
// and starts nothing; --wait follows the key's run; the key cannot be combined with --run-id.
TEST_F(CliTest, StartWithAnIdempotencyKeyStartsOnce) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kSum, test_worker_config(db_->url())));
  CommandResult first = pgflow("start cliSum --input '[1]' --idempotency-key order-9 --json");
  ASSERT_EQ(first.exit_code, 0) << first.err;
  const json created = json::parse(first.out);
  EXPECT_EQ(created["created"], true);
  EXPECT_THAT(first.err, ::testing::IsEmpty());

  CommandResult again =
      pgflow("start cliSum --input '[2, 3]' --idempotency-key order-9 --wait --json");
  ASSERT_EQ(again.exit_code, 0) << again.err;
  const json waited = json::parse(again.out);
  EXPECT_EQ(waited["run_id"], created["run_id"]) << "the repeat follows the key's run";
  EXPECT_EQ(waited["created"], false) << "and says it did not start it";
  EXPECT_EQ(waited["output"], json({{"total", 2}})) << "which ran with the first input";

  CommandResult plain = pgflow("start cliSum --input '[4]' --idempotency-key order-9");
  ASSERT_EQ(plain.exit_code, 0) << plain.err;
  EXPECT_EQ(plain.out, "run " + created["run_id"].get<std::string>() + " (flow cliSum)\n");
  EXPECT_THAT(plain.err, HasSubstr("the idempotency key already started run " +
                                   created["run_id"].get<std::string>() + " (completed)"));
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "1");

  CommandResult both =
      pgflow("start cliSum --idempotency-key k --run-id 0b0e0c6e-9c4b-4f5e-8d2a-111111111111");
  EXPECT_NE(both.exit_code, 0);
  EXPECT_THAT(both.err, HasSubstr("excludes"));
  // Refused before anything is sent (exit 2); the database refuses the same.
  expect_usage_error("start cliSum --idempotency-key ''", "must be 1 to 255 characters, not 0");
}

// --priority sets the run's priority in the start's transaction (a key's earlier run keeps its
// own); `pgflow run priority` changes it later.
TEST_F(CliTest, StartWithAPriorityAndChangeItLater) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kSum, test_worker_config(db_->url())));
  CommandResult started = pgflow("start cliSum --input '[1]' --priority 7 --json");
  ASSERT_EQ(started.exit_code, 0) << started.err;
  const std::string run_id = json::parse(started.out)["run_id"].get<std::string>();
  const std::string priority_of =
      "select coalesce((select priority::text from pgflow.run_priorities "
      "where run_id = $1::uuid), 'default')";
  EXPECT_EQ(sql(priority_of, {run_id}), "7");

  CommandResult keyed =
      pgflow("start cliSum --input '[2]' --idempotency-key k1 --priority 2 --json");
  ASSERT_EQ(keyed.exit_code, 0) << keyed.err;
  const std::string keyed_run = json::parse(keyed.out)["run_id"].get<std::string>();
  EXPECT_EQ(sql(priority_of, {keyed_run}), "2");
  CommandResult repeat = pgflow("start cliSum --input '[2]' --idempotency-key k1 --priority 9");
  ASSERT_EQ(repeat.exit_code, 0) << repeat.err;
  EXPECT_EQ(sql(priority_of, {keyed_run}), "2") << "a repeat does not reprioritize the key's run";

  CommandResult changed = pgflow("run priority " + run_id + " -3");
  ASSERT_EQ(changed.exit_code, 0) << changed.err;
  EXPECT_EQ(changed.out, "run " + run_id + ": priority -3\n");
  EXPECT_EQ(sql(priority_of, {run_id}), "-3");
  EXPECT_EQ(pgflow("run priority " + run_id + " 0").exit_code, 0);
  EXPECT_EQ(sql(priority_of, {run_id}), "default");

  CommandResult unknown = pgflow("run priority 00000000-0000-0000-0000-000000000000 1");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("00000000-0000-0000-0000-000000000000"));
}

TEST_F(CliTest, StartWaitShowsLiveProgressOnlyOnATerminal) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(kSum, test_worker_config(db_->url())));
  // script(1) (util-linux, always installed) runs the command on a pseudo-terminal.
  const std::string command = absl::StrCat(
      PGFLOW_CLI_BIN, " start cliSum --input '[1, 2]' --wait --database ", shell_quote(db_->url()));
  CommandResult on_terminal =
      run_command(absl::StrCat("script -qec ", shell_quote(command), " /dev/null"));
  ASSERT_EQ(on_terminal.exit_code, 0) << on_terminal.out;
  EXPECT_THAT(on_terminal.out,
              ::testing::ContainsRegex("\r\x1b\\[Krun [-0-9a-f]+: [0-9]/2 steps done"));
  EXPECT_THAT(on_terminal.out,
              ::testing::ContainsRegex("run [-0-9a-f]+  flow cliSum  completed after "));
  // Poll-only (a pooler's connection: no LISTEN), the CLI re-reads the run itself.
  CommandResult polling = run_command(
      absl::StrCat("script -qec ", shell_quote(command + " --poll-only"), " /dev/null"));
  ASSERT_EQ(polling.exit_code, 0) << polling.out;
  EXPECT_THAT(polling.out,
              ::testing::ContainsRegex("\r\x1b\\[Krun [-0-9a-f]+: [0-9]/2 steps done"));
  EXPECT_THAT(polling.out,
              ::testing::ContainsRegex("run [-0-9a-f]+  flow cliSum  completed after "));

  CommandResult piped = pgflow("start cliSum --input '[1, 2]' --wait");
  ASSERT_EQ(piped.exit_code, 0) << piped.err;
  EXPECT_THAT(piped.err, ::testing::IsEmpty());
  EXPECT_THAT(piped.out, ::testing::Not(HasSubstr("steps done")));
}

TEST_F(CliTest, StartWaitEndsOnCancelAndOnItsTimeout) {
  std::atomic<int> holding{0};
  auto hold = Flow<"cliHold", int>({.max_attempts = 1})
                  .step<"hold">([&holding](int x, Context& ctx) -> int {
                    ++holding;
                    wait_for([&ctx] { return ctx.stop_token().stop_requested(); });
                    return x;
                  });
  // No worker yet: the run cannot end, so the wait runs out.
  sql(absl::StrCat(
          "select pgflow.ensure_flow_compiled('cliHold', $1::jsonb, pgflow.worker_protocol())"),
      {pgflow::shape_of(hold).dump()});
  CommandResult waited = pgflow("start cliHold --input 1 --wait --timeout 1s");
  EXPECT_EQ(waited.exit_code, 5) << waited.err;
  EXPECT_THAT(waited.err, HasSubstr("is still running after 1s"));

  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(hold, test_worker_config(db_->url())));
  ASSERT_TRUE(wait_for([&] { return holding.load() == 1; }));
  const std::string run_id = sql("select run_id::text from pgflow.runs");
  CommandResult cancelled;
  std::thread waiter([&] {
    cancelled =
        pgflow("start cliHold --input 2 --wait --run-id 00000000-0000-0000-0000-0000000000c1");
  });
  ASSERT_TRUE(wait_for([&] { return holding.load() == 2; }));
  ASSERT_EQ(pgflow("run cancel 00000000-0000-0000-0000-0000000000c1 --reason enough").exit_code, 0);
  waiter.join();
  EXPECT_EQ(cancelled.exit_code, 4) << cancelled.err;
  EXPECT_THAT(cancelled.out, HasSubstr("cancelled: enough"));
  EXPECT_EQ(pgflow("run cancel " + run_id).exit_code, 0);
}

// With --json a wait that runs out still prints the run on stdout (exit 5), so a script learns
// the id of the run it started; before, stdout was empty.
TEST_F(CliTest, StartWaitJsonPrintsTheRunWhenTheWaitRunsOut) {
  deploy("greet", "greet");  // no worker: the run cannot end
  CommandResult waited = pgflow("start greet --wait --timeout 10ms --json");
  EXPECT_EQ(waited.exit_code, 5) << waited.err;
  const nlohmann::json still = nlohmann::json::parse(waited.out, nullptr, false);
  ASSERT_TRUE(still.is_object()) << waited.out;
  EXPECT_EQ(still.value("status", ""), "started");
  EXPECT_EQ(still.value("flow_slug", ""), "greet");
  EXPECT_EQ(sql("select count(*) from pgflow.runs where run_id = $1::uuid",
                {still.value("run_id", "00000000-0000-0000-0000-000000000000")}),
            "1");
}

// JSON the program cannot represent (a number beyond a double's range, which jsonb stores) is
// an error naming the problem, not an abort; and an argument that is a message body is shown
// escaped and bounded, never whole.
TEST_F(CliTest, ValuesItCannotReadOrMustNotShowAreHandled) {
  deploy("greet", "greet");
  const std::string run = sql("select pgflow.start_run('greet', '[1, 1e400]')::text");
  CommandResult shown = pgflow("run show " + run);
  EXPECT_EQ(shown.exit_code, 1) << shown.err;
  EXPECT_THAT(shown.err, HasSubstr("JSON this program cannot read"));
  EXPECT_THAT(shown.err, Not(HasSubstr("1e400")));

  const std::string body = R"({"card": ")" + std::string(64, 'x') + R"(SECRET-TAIL", )";
  CommandResult bad_input = pgflow("start greet --input '" + body + "'");
  EXPECT_EQ(bad_input.exit_code, 2);
  EXPECT_THAT(bad_input.err, HasSubstr("--input: not valid JSON (at byte"));
  EXPECT_THAT(bad_input.err, Not(HasSubstr("SECRET-TAIL")));
  CommandResult stray = pgflow("start greet '" + body + "'");
  EXPECT_EQ(stray.exit_code, 2);
  EXPECT_THAT(stray.err, HasSubstr("not expected"));
  EXPECT_THAT(stray.err, Not(HasSubstr("SECRET-TAIL")));
}

TEST_F(CliTest, RunsListsNewestFirstWithFilters) {
  deploy("alpha", "alpha");
  deploy("betaV1", "beta");
  const std::string a1 = sql("select pgflow.start_run('alpha', '{}')::text");
  const std::string b1 = sql("select pgflow.start_run('beta', '{}')::text");
  const std::string a2 = sql("select pgflow.start_run('alpha', '{}')::text");
  sql("update pgflow.runs set started_at = now() - interval '3 days' where run_id = $1::uuid",
      {a1});
  sql("update pgflow.runs set started_at = now() - interval '1 minute' where run_id = $1::uuid",
      {b1});
  sql("select pgflow.cancel_run($1::uuid, 'stop')", {a2});

  auto ids = [&](const std::string& args) {
    CommandResult r = pgflow("runs --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    std::vector<std::string> out;
    const json listed = json::parse(r.out);
    for (const json& run : listed["runs"]) out.push_back(run["run_id"]);
    return out;
  };
  EXPECT_EQ(ids(""), (std::vector<std::string>{a2, b1, a1}));
  EXPECT_EQ(ids("--flow alpha"), (std::vector<std::string>{a2, a1}));
  EXPECT_EQ(ids("--flow beta"), (std::vector<std::string>{b1}))
      << "an alias finds its versions' runs";
  EXPECT_EQ(ids("--flow betaV1"), (std::vector<std::string>{b1}));
  EXPECT_EQ(ids("--status started"), (std::vector<std::string>{b1, a1}));
  EXPECT_EQ(ids("--status cancelled"), (std::vector<std::string>{a2}));
  EXPECT_EQ(ids("--status failed"), (std::vector<std::string>{a2}));
  EXPECT_EQ(ids("--status completed"), (std::vector<std::string>{}));
  EXPECT_EQ(ids("--since 1h"), (std::vector<std::string>{a2, b1}));
  EXPECT_EQ(ids("--since 30s"), (std::vector<std::string>{a2}));
  EXPECT_EQ(ids("--since 2000-01-01T00:00:00Z --limit 2"), (std::vector<std::string>{a2, b1}));

  CommandResult cut = pgflow("runs --json --limit 2");
  ASSERT_EQ(cut.exit_code, 0) << cut.err;
  EXPECT_EQ(json::parse(cut.out)["limit"], 2);
  EXPECT_EQ(json::parse(cut.out)["truncated"], true) << "three runs match, two are shown";
  CommandResult whole = pgflow("runs --json --limit 3");
  EXPECT_EQ(json::parse(whole.out)["truncated"], false) << "exactly three match: nothing was cut";
  EXPECT_EQ(json::parse(whole.out)["runs"][1]["flow_alias"], "beta");

  CommandResult table = pgflow("runs --limit 1");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out,
              ::testing::ContainsRegex("RUN ID +FLOW +ALIAS +STATUS +STARTED +TOOK +STEPS DONE"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex(a2 + " +alpha +alpha +cancelled +"));
  EXPECT_THAT(table.out, HasSubstr("(the newest 1; more runs match: --limit N shows more)"));
  EXPECT_THAT(pgflow("runs --limit 3").out, ::testing::Not(HasSubstr("the newest")))
      << "nothing was cut";

  CommandResult unknown = pgflow("run show 00000000-0000-0000-0000-000000000001");
  EXPECT_EQ(unknown.exit_code, 1);
  EXPECT_THAT(unknown.err, HasSubstr("run 00000000-0000-0000-0000-000000000001 does not exist"));
}

TEST_F(CliTest, WorkersListPauseResumeAndDeprecate) {
  deploy("greet", "greet");
  auto register_worker = [&] {
    return sql(
        "select worker_id from pgflow.register_worker(gen_random_uuid(), 'greet-worker', 'greet', "
        "'greet', "
        "pgflow.worker_protocol())");
  };
  const std::string w1 = register_worker(), w2 = register_worker(), gone = register_worker();
  sql("select pgflow.mark_worker_stopped($1::uuid)", {gone});
  sql("update pgflow.workers set last_heartbeat_at = now() - interval '1 minute' where worker_id = "
      "$1::uuid",
      {w2});

  auto states = [&](const std::string& args) {
    CommandResult r = pgflow("workers --json " + args);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const json listed = json::parse(r.out);
    std::map<std::string, std::string> out;
    for (const json& w : listed["workers"]) out[w["worker_id"]] = w["state"];
    return out;
  };
  EXPECT_EQ(states(""), (std::map<std::string, std::string>{{w1, "alive"}, {w2, "unresponsive"}}));
  EXPECT_EQ(states("--all"), (std::map<std::string, std::string>{
                                 {w1, "alive"}, {w2, "unresponsive"}, {gone, "stopped"}}));
  CommandResult table = pgflow("workers");
  EXPECT_THAT(table.out, ::testing::ContainsRegex("greet-worker +enabled +1"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex(
                             w2 + " +greet-worker +unresponsive +greet +greet +1m( [0-9]+s)? ago"));

  CommandResult paused = pgflow("workers pause greet-worker --reason 'bad release'");
  ASSERT_EQ(paused.exit_code, 0) << paused.err;
  EXPECT_EQ(
      sql("select pause_reason from pgflow.worker_functions where function_name = 'greet-worker'"),
      "bad release");
  EXPECT_EQ(states("")[w1], "paused");
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection other, pg::Connection::open(db_->url()));
  absl::StatusOr<pg::Result> refused = other.exec(
      "select pgflow.register_worker(gen_random_uuid(), 'greet-worker', 'greet', 'greet', "
      "pgflow.worker_protocol())");
  EXPECT_THAT(refused.status(), pgflow::testing::StatusIs(::testing::_, HasSubstr("is paused")));
  CommandResult listed = pgflow("workers");
  EXPECT_THAT(listed.out,
              ::testing::ContainsRegex("greet-worker +paused +1 +[-0-9: Z]+ +bad release"));
  ASSERT_EQ(pgflow("workers resume greet-worker").exit_code, 0);
  EXPECT_EQ(states("")[w1], "alive");

  CommandResult one = pgflow("workers deprecate " + w2 + " --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out)["deprecated"], json({w2}));
  CommandResult rest = pgflow("workers deprecate greet-worker --json");
  EXPECT_EQ(json::parse(rest.out)["deprecated"], json({w1}));
  EXPECT_EQ(states(""),
            (std::map<std::string, std::string>{{w1, "deprecated"}, {w2, "deprecated"}}));
  EXPECT_EQ(sql("select pgflow.worker_heartbeat($1::uuid)", {w1}), "t")
      << "the worker learns it at its heartbeat";
  EXPECT_THAT(pgflow("workers deprecate greet-worker").out, HasSubstr("nothing to deprecate"));

  for (const char* args :
       {"workers pause nobody", "workers resume nobody", "workers deprecate nobody"}) {
    CommandResult r = pgflow(args);
    EXPECT_EQ(r.exit_code, 1) << args;
    EXPECT_THAT(r.err, HasSubstr("\"nobody\"")) << args;
  }
}

// Names and reasons in the database are chosen by workers and applications; printed raw, an
// escape sequence in one would drive the operator's terminal (clear it, retitle it, hide
// lines). Human output escapes control characters as log lines do; --json escapes them anyway.
TEST_F(CliTest, HumanOutputEscapesControlCharactersFromTheDatabase) {
  deploy("greet", "greet");
  const std::string clear_screen = "\x1b[2J\x1b[H";
  const std::string retitle = "\x1b]0;pwned\x07";
  sql("select worker_id from pgflow.register_worker(gen_random_uuid(), $1, 'greet', 'greet', "
      "pgflow.worker_protocol())",
      {"evil" + clear_screen + "worker"});
  sql("select pgflow._pause_worker_function($1, $2)",
      {"evil" + clear_screen + "worker", "why" + retitle + "\nfake line"});
  const std::string run_id = sql("select pgflow.start_run('greet', '{}')::text");
  sql("select pgflow.cancel_run($1::uuid, $2)", {run_id, "reason" + retitle});

  for (const std::string& args :
       {std::string("workers"), "run show " + run_id, std::string("runs")}) {
    CommandResult r = pgflow(args);
    ASSERT_EQ(r.exit_code, 0) << args << ": " << r.err;
    EXPECT_EQ(r.out.find('\x1b'), std::string::npos) << args << " printed an escape character";
    EXPECT_EQ(r.out.find('\x07'), std::string::npos) << args << " printed a bell";
  }
  EXPECT_THAT(pgflow("workers").out, AllOf(HasSubstr("evil\\x1b[2J\\x1b[Hworker"),
                                           HasSubstr("why\\x1b]0;pwned\\x07\\nfake line")));
  EXPECT_THAT(pgflow("run show " + run_id).out, HasSubstr("cancelled: reason\\x1b]0;pwned\\x07"));
  // Errors name database values too.
  CommandResult refused = pgflow(std::string("workers resume 'x") + clear_screen + "'");
  EXPECT_EQ(refused.exit_code, 1);
  EXPECT_EQ(refused.err.find('\x1b'), std::string::npos) << refused.err;
}

// pgflow calls realtime.send only when a role with the privileges of pgflow's owner owns it
// (schema 0027): `pgflow status` says whether broadcasts go out, and who owns an untrusted one.
TEST_F(CliTest, StatusSaysWhetherSupabaseBroadcastsGoOut) {
  EXPECT_EQ(json::parse(pgflow("status --json").out)["realtime"], "off");
  EXPECT_THAT(pgflow("status").out, ::testing::Not(HasSubstr("broadcasts")));
  const std::string role = "rt_" + sql("select current_database()");
  sql("create role " + role + " nologin");
  sql("create schema realtime authorization " + role);
  ASSERT_TRUE(conn_
                  ->exec_script("set role " + role +
                                "; create function realtime.send(jsonb, text, text, boolean) "
                                "returns void language sql as 'select null::void'; reset role")
                  .ok());
  EXPECT_EQ(json::parse(pgflow("status --json").out)["realtime"],
            "untrusted (owned by " + role + ")");
  EXPECT_THAT(pgflow("status").out,
              HasSubstr("Supabase broadcasts: untrusted (owned by " + role +
                        "): nothing is broadcast (docs/security.md, \"Realtime\")"));
  sql("alter function realtime.send(jsonb, text, text, boolean) owner to current_user");
  EXPECT_EQ(json::parse(pgflow("status --json").out)["realtime"], "on");
  EXPECT_THAT(pgflow("status").out, HasSubstr("Supabase broadcasts: on\n"));
  sql("drop schema realtime cascade");
  sql("drop role " + role);
}

TEST_F(CliTest, StatusMetricsGivesQueueDepthOldestTaskAndRunsPerFlow) {
  deploy("busy", "busy");
  deploy("idle", "idle");
  sql("select pgflow.start_run('busy', '{}')");
  sql("select pgflow.start_run('busy', '{}')");
  const std::string cancelled = sql("select pgflow.start_run('busy', '{}')::text");
  sql("select pgflow.cancel_run($1::uuid)", {cancelled});
  sql("update pgflow.step_tasks set queued_at = now() - interval '10 minutes' where status = "
      "'queued'");
  // Runs whose wait timers raised (wake_waiting_tasks sets them aside so): counted while started
  // with a due wait; busy's runs (rows left behind) have none.
  sql("select pgflow.create_flow('napping')");
  sql("select pgflow.add_wait_step('napping', 'nap', '{\"kind\": \"sleep\", \"seconds\": 3600}')");
  sql("select pgflow.start_run('napping', '{}')");
  sql("update pgflow.step_tasks set wake_at = now() - interval '1 minute' where flow_slug = "
      "'napping'");
  sql("insert into pgflow.timer_retries (run_id, retry_at, last_error) select run_id, now(), "
      "'42P01 x' from pgflow.runs where flow_slug in ('busy', 'napping')");
  CommandResult r = pgflow("status --metrics --json");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  json flows = json::parse(r.out)["flows"];
  ASSERT_EQ(flows.size(), 3u);
  EXPECT_EQ(flows[0]["flow_slug"], "busy");
  EXPECT_EQ(flows[0]["queued_tasks"], 2);
  EXPECT_EQ(flows[0]["started_tasks"], 0);
  EXPECT_GE(flows[0]["oldest_queued_age_seconds"].get<double>(), 600);
  EXPECT_EQ(flows[0]["runs"], json({{"started", 2}, {"completed", 0}, {"failed", 1}}));
  EXPECT_EQ(flows[0]["timer_retries"], 0) << "nothing of busy's runs is due";
  EXPECT_EQ(flows[2]["timer_retries"], 1) << "napping's run is stuck";
  EXPECT_EQ(flows[1], json::parse(R"({"flow_slug": "idle", "queued_tasks": 0, "started_tasks": 0,
      "oldest_queued_age_seconds": null, "runs": {"started": 0, "completed": 0, "failed": 0},
      "timer_retries": 0})"));
  CommandResult table = pgflow("status --metrics");
  EXPECT_THAT(table.out, ::testing::ContainsRegex("busy +2 +0 +10m( [0-9]+s)? +2 +0 +1 +0\n"));

  CommandResult scraped = pgflow("status --metrics --prometheus");
  ASSERT_EQ(scraped.exit_code, 0) << scraped.err;
  EXPECT_THAT(scraped.out, HasSubstr("# TYPE pgflow_queued_tasks gauge\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_queued_tasks{flow=\"busy\"} 2\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_started_tasks{flow=\"idle\"} 0\n"));
  EXPECT_THAT(scraped.out,
              ::testing::ContainsRegex(
                  "\npgflow_oldest_queued_task_age_seconds\\{flow=\"busy\"\\} 6[0-9][0-9]"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_oldest_queued_task_age_seconds{flow=\"idle\"} 0\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_runs{flow=\"busy\",status=\"failed\"} 1\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_runs{flow=\"busy\",status=\"started\"} 2\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_timer_retries{flow=\"napping\"} 1\n"));
  EXPECT_THAT(scraped.out, HasSubstr("\npgflow_timer_retries{flow=\"idle\"} 0\n"));
  expect_usage_error("status --prometheus", "--prometheus");
  expect_usage_error("status --metrics --prometheus --json", "--prometheus");
  expect_usage_error("--json status --metrics --prometheus", "--prometheus");
}

// A command runs one subcommand: `workers pause A resume A` is refused, not half done.
TEST_F(CliTest, ACommandRunsOneSubcommandAtMost) {
  CommandResult two = pgflow("workers pause fnA resume fnA");
  EXPECT_EQ(two.exit_code, 2) << two.out;
  EXPECT_EQ(sql("select count(*) from pgflow.worker_functions where paused_at is not null"), "0");
}

// Output that cannot be written fails the command (exit 1), so `pgflow ... > f.tmp && mv f.tmp f`
// never installs a truncated file.
TEST_F(CliTest, OutputThatCannotBeWrittenFailsTheCommand) {
  CommandResult full = pgflow("status --json > /dev/full");
  EXPECT_EQ(full.exit_code, 1);
  EXPECT_THAT(full.err, HasSubstr("pgflow: could not write the output"));
}

TEST_F(CliTest, PruneCountsWhatItDeletesAndADryRunDeletesNothing) {
  deploy("old", "old");
  const std::string finished = sql("select pgflow.start_run('old', '{}')::text");
  const std::string running = sql("select pgflow.start_run('old', '{}')::text");
  sql("select pgflow.cancel_run($1::uuid)", {finished});
  sql("update pgflow.runs set started_at = now() - interval '30 days', failed_at = now() - "
      "interval '29 days', "
      "cancelled_at = now() - interval '29 days' where run_id = $1::uuid",
      {finished});
  sql("update pgflow.runs set started_at = now() - interval '30 days' where run_id = $1::uuid",
      {running});

  CommandResult missing = pgflow("prune --older-than 14d");
  EXPECT_EQ(missing.exit_code, 1);
  EXPECT_THAT(missing.err, HasSubstr("sql/contrib/prune_data_older_than.sql"));
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "2");

  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string helper, [] {
    CommandResult r = run_command(
        absl::StrCat("cat ", PGFLOW_SOURCE_DIR, "/sql/contrib/prune_data_older_than.sql"));
    return r.exit_code == 0 ? absl::StatusOr<std::string>(r.out) : absl::NotFoundError(r.err);
  }());
  ASSERT_TRUE(conn_->exec_script(helper).ok());
  // Workers are counted as the helper deletes them: a live one (beat 10 s ago) never.
  sql("insert into pgflow.workers (worker_id, queue_name, function_name, protocol, "
      "last_heartbeat_at) values (gen_random_uuid(), 'old', 'fn', pgflow.worker_protocol(), "
      "now() - interval '10 seconds')");
  CommandResult live = pgflow("prune --older-than 5s --dry-run --json");
  ASSERT_EQ(live.exit_code, 0) << live.err;
  EXPECT_EQ(json::parse(live.out)["workers"], 0);
  // A fraction of a millisecond is kept, not rounded down to nothing (the cutoff then now()).
  CommandResult fine = pgflow("prune --older-than 0.5ms --dry-run --json");
  ASSERT_EQ(fine.exit_code, 0) << fine.err;
  EXPECT_EQ(json::parse(fine.out)["older_than"], "00:00:00.0005");
  CommandResult dry = pgflow("prune --older-than 14d --dry-run --json");
  ASSERT_EQ(dry.exit_code, 0) << dry.err;
  json counted = json::parse(dry.out);
  EXPECT_EQ(counted["older_than"], "336:00:00");
  EXPECT_EQ(counted["runs"], 1);
  EXPECT_EQ(counted["step_states"], 1);
  EXPECT_EQ(counted["step_tasks"], 1);
  EXPECT_EQ(counted["dry_run"], true);
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "2") << "a dry run deletes nothing";

  CommandResult pruned = pgflow("prune --older-than 14d");
  ASSERT_EQ(pruned.exit_code, 0) << pruned.err;
  EXPECT_THAT(pruned.out, ::testing::ContainsRegex(
                              "deleted history that ended before .*\n +WHAT +ROWS\n +runs +1\n"));
  EXPECT_EQ(sql("select run_id::text from pgflow.runs"), running)
      << "a started run is never pruned";
  EXPECT_EQ(sql("select count(*) from pgflow.step_tasks where run_id = $1::uuid", {finished}), "0");
}

}  // namespace
}  // namespace pgflow
