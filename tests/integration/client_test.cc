// pgflow::Client against the real embedded PostgreSQL, with a real worker where runs must end.
#include "pgflow/client.h"

#include <atomic>
#include <cctype>
#include <condition_variable>
#include <future>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/flow.h"
#include "pgflow/flow_signature.h"
#include "pgflow/status.h"
#include "pgflow/worker.h"
#include "testing/client_test_base.h"
#include "testing/database_test.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"
#include "testing/worker_flows.h"
#include "testing/worker_harness.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using pgflow::testing::IsOk;
using pgflow::testing::IsOkAndHolds;
using pgflow::testing::query_text;
using pgflow::testing::StatusIs;
using pgflow::testing::test_worker_config;
using pgflow::testing::TestDatabase;
using pgflow::testing::wait_for;
using pgflow::testing::wait_until;
using ::testing::AllOf;
using ::testing::HasSubstr;
namespace wf = pgflow::testing::worker_flows;

using ClientTest = pgflow::testing::ClientTestBase;

TEST_F(ClientTest, StartsARunAndReturnsItsInitialState) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow("wSequential", 5));
  EXPECT_EQ(run.flow_slug, "wSequential");
  EXPECT_EQ(run.status, pgflow::RunStatus::kStarted);
  EXPECT_EQ(run.input, 5);
  EXPECT_EQ(run.remaining_steps, 3);
  ASSERT_EQ(run.steps.size(), 3u);
  EXPECT_EQ(run.steps[0].step_slug, "a");
  EXPECT_EQ(run.steps[0].status, pgflow::StepStatus::kStarted);
  EXPECT_EQ(run.step("c")->status, pgflow::StepStatus::kCreated);
  EXPECT_EQ(run.step("nope"), nullptr);
}

TEST_F(ClientTest, ACallerChosenRunIdIsKept) {
  compile(wf::sequential);
  const std::string id = "0b0e0c6e-9c4b-4f5e-8d2a-111111111111";
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow("wSequential", 1, id));
  EXPECT_EQ(run.run_id, id);
  // A second start with the same id fails instead of starting twice.
  EXPECT_THAT(client_->start_flow("wSequential", 1, id),
              StatusIs(absl::StatusCode::kAlreadyExists,
                       AllOf(HasSubstr("Run id " + id + " is taken"), HasSubstr("wSequential"))));
}

TEST_F(ClientTest, UnknownFlowIsNotFoundAndNamesIt) {
  EXPECT_THAT(client_->start_flow("noSuchFlow", 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("noSuchFlow")));
}

TEST_F(ClientTest, BadInputForARootMapIsRefusedWithTheDatabaseMessage) {
  compile(wf::maps);
  auto run = client_->start_flow("wMaps", json{{"not", "an array"}});
  EXPECT_THAT(run, StatusIs(absl::StatusCode::kFailedPrecondition,
                            AllOf(HasSubstr("wMaps"), HasSubstr("not an array"))));
}

// The lean start returns only the id of a run start_flow would have started, with the same
// errors, the same run_id rule, typed and inside a transaction.
TEST_F(ClientTest, TheLeanStartReturnsTheIdOfTheStartedRun) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string id, client_->start_run("wSequential", 5));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->get_run(id));
  EXPECT_EQ(run.flow_slug, "wSequential");
  EXPECT_EQ(run.status, pgflow::RunStatus::kStarted);
  EXPECT_EQ(run.input, 5);
  ASSERT_EQ(run.steps.size(), 3u);
  EXPECT_EQ(run.step("a")->status, pgflow::StepStatus::kStarted);

  const std::string chosen = "0b0e0c6e-9c4b-4f5e-8d2a-222222222222";
  EXPECT_THAT(client_->start_run("wSequential", 1, chosen), IsOkAndHolds(chosen));
  EXPECT_THAT(
      client_->start_run("wSequential", 1, chosen),
      StatusIs(absl::StatusCode::kAlreadyExists,
               AllOf(HasSubstr("Run id " + chosen + " is taken"), HasSubstr("wSequential"))));
  EXPECT_THAT(client_->start_run("noSuchFlow", 1),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("noSuchFlow")));
  EXPECT_THAT(
      client_->start_run_by_slug("noSuchFlow", 1),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("Flow \"noSuchFlow\" does not exist")));

  compile(wf::maps);
  EXPECT_THAT(client_->start_run("wMaps", json{{"not", "an array"}}),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("wMaps"), HasSubstr("not an array"))));
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "2") << "the failed starts left no run";
}

TEST_F(ClientTest, TheLeanStartIsTypedAndJoinsTheCallersTransaction) {
  compile(wf::conditional);
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string typed,
                              client_->start_run(wf::conditional, json{{"vip", true}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string pinned,
                              client_->start_run_by_slug(wf::conditional, json{{"vip", false}}));
  EXPECT_EQ(sql("select string_agg(input::text, ',' order by input::text) from pgflow.runs "
                "where run_id in ($1::uuid, $2::uuid) and flow_slug = 'wConditional'",
                {typed, pinned}),
            "{\"vip\": false},{\"vip\": true}");

  std::string in_tx;
  absl::Status rolled_back = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<std::string> a = tx.start_run(wf::conditional, json{{"vip", true}});
    if (!a.ok()) return a.status();
    absl::StatusOr<std::string> b = tx.start_run_by_slug("wConditional", json{{"vip", true}});
    if (!b.ok()) return b.status();
    in_tx = *a;
    absl::StatusOr<Rows> both =
        tx.exec("select count(*) from pgflow.runs where run_id in ($1::uuid, $2::uuid)", {*a, *b});
    if (!both.ok()) return both.status();
    EXPECT_EQ((*both)[0][0], "2") << "both runs exist inside the transaction";
    return absl::AbortedError("changed my mind");
  });
  EXPECT_THAT(rolled_back, StatusIs(absl::StatusCode::kAborted, HasSubstr("changed my mind")));
  EXPECT_EQ(sql("select count(*) from pgflow.runs where run_id = $1::uuid", {in_tx}), "0")
      << "and neither survives the rollback";
}

// The idempotent start: one run per alias and key, whichever way it is started; bad keys are
// refused (before anything is sent: TheIdempotentStartOnAnOlderSchemaSaysToMigrate); a failed
// start leaves the key free.
TEST_F(ClientTest, TheIdempotentStartCreatesOneRunPerKey) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart first,
                              client_->start_run_idempotent("wSequential", 5, "order-1"));
  EXPECT_TRUE(first.created);
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->get_run(first.run_id));
  EXPECT_EQ(run.input, 5);
  EXPECT_EQ(run.step("a")->status, pgflow::StepStatus::kStarted);

  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart again,
                              client_->start_run_idempotent("wSequential", 6, "order-1"));
  EXPECT_EQ(again.run_id, first.run_id);
  EXPECT_FALSE(again.created);
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      IdempotentStart pinned,
      client_->start_run_idempotent_by_slug("wSequential", json::object(), "order-1"));
  EXPECT_EQ(pinned.run_id, first.run_id) << "a start by slug finds the alias's key";
  EXPECT_FALSE(pinned.created);
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), "1");
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart other,
                              client_->start_run_idempotent("wSequential", 7, "order-2"));
  EXPECT_TRUE(other.created);
  EXPECT_NE(other.run_id, first.run_id);

  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Idempotency key must be 1 to 255 characters (got 0")));
  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, std::string(256, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(got 256 characters)")));
  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, std::string(255, 'k')), IsOk());
  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, "bad\xff"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("idempotency key")));
  EXPECT_THAT(client_->start_run_idempotent("noSuchFlow", 1, "k"),
              StatusIs(absl::StatusCode::kNotFound, HasSubstr("noSuchFlow")));

  compile(wf::maps);
  EXPECT_THAT(client_->start_run_idempotent("wMaps", json{{"not", "an array"}}, "batch-1"),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("not an array")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart fixed,
                              client_->start_run_idempotent(wf::maps, {1, 2}, "batch-1"));
  EXPECT_TRUE(fixed.created) << "the failed start left the key free";
}

// Many producers start with one key at the same moment (each its own client, so its own
// session): exactly one run is created and every producer gets its id.
TEST_F(ClientTest, ConcurrentIdempotentStartsCreateExactlyOneRun) {
  compile(wf::sequential);
  constexpr int kProducers = 6;
  constexpr int kKeys = 20;
  std::vector<Client> clients;
  for (int i = 0; i < kProducers; ++i) {
    PGFLOW_ASSERT_OK_AND_ASSIGN(Client c, Client::connect({.connection_string = db_->url()}));
    clients.push_back(std::move(c));
  }
  for (int k = 0; k < kKeys; ++k) {
    const std::string key = "race-" + std::to_string(k);
    std::vector<absl::StatusOr<IdempotentStart>> results(kProducers);
    std::atomic<int> ready{0};
    {
      std::vector<std::jthread> producers;
      for (int i = 0; i < kProducers; ++i) {
        producers.emplace_back([&, i] {
          ready.fetch_add(1);
          while (ready.load() < kProducers) std::this_thread::yield();
          results[i] = clients[i].start_run_idempotent("wSequential", i, key);
        });
      }
    }
    int created = 0;
    for (const auto& r : results) {
      ASSERT_THAT(r, IsOk()) << key;
      created += r->created ? 1 : 0;
      EXPECT_EQ(r->run_id, results[0]->run_id) << key;
    }
    EXPECT_EQ(created, 1) << key;
  }
  EXPECT_EQ(sql("select count(*) from pgflow.runs"), std::to_string(kKeys));
  EXPECT_EQ(sql("select count(*) from pgflow.run_idempotency_keys k join pgflow.runs r "
                "using (run_id)"),
            std::to_string(kKeys));
}

// Inside the caller's transaction the key is taken only if that commits.
TEST_F(ClientTest, TheIdempotentStartJoinsTheCallersTransaction) {
  compile(wf::sequential);
  absl::Status rolled_back = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<IdempotentStart> a = tx.start_run_idempotent(wf::sequential, 1, "tx-1");
    if (!a.ok()) return a.status();
    EXPECT_TRUE(a->created);
    absl::StatusOr<IdempotentStart> b = tx.start_run_idempotent_by_slug("wSequential", 2, "tx-1");
    if (!b.ok()) return b.status();
    EXPECT_EQ(b->run_id, a->run_id) << "the transaction sees its own key";
    return absl::AbortedError("changed my mind");
  });
  EXPECT_THAT(rolled_back, StatusIs(absl::StatusCode::kAborted, HasSubstr("changed my mind")));
  EXPECT_EQ(sql("select count(*) from pgflow.run_idempotency_keys"), "0");

  std::string committed;
  ASSERT_THAT(client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<IdempotentStart> a = tx.start_run_idempotent(wf::sequential, 3, "tx-1");
    if (!a.ok()) return a.status();
    EXPECT_TRUE(a->created) << "the rolled-back start left the key free";
    committed = a->run_id;
    return absl::OkStatus();
  }),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart after,
                              client_->start_run_idempotent("wSequential", 4, "tx-1"));
  EXPECT_EQ(after.run_id, committed);
  EXPECT_FALSE(after.created);
}

// A database migrated before 0017 has no idempotent start: the error says what to do; a bad key
// is refused before anything is sent (so still kInvalidArgument, not the missing function).
TEST_F(ClientTest, TheIdempotentStartOnAnOlderSchemaSaysToMigrate) {
  compile(wf::sequential);
  ASSERT_THAT(conn_->exec("drop function pgflow.start_run_idempotent(text, jsonb, text)"), IsOk());
  EXPECT_THAT(
      client_->start_run_idempotent("wSequential", 1, "k"),
      StatusIs(absl::StatusCode::kFailedPrecondition,
               AllOf(HasSubstr("pgflow.start_run_idempotent"), HasSubstr("run `pgflow migrate`"))));
  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, ""),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Idempotency key must be 1 to 255 characters (got 0")));
  EXPECT_THAT(client_->start_run_idempotent("wSequential", 1, std::string(256, 'k')),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("(got 256 characters)")));
}

// A run's priority, set in the start's transaction, is a start option: in a flow limited to one
// task at a time, the prioritized run's task is admitted before the runs that were waiting;
// set on a Client later it reorders a waiting run. An unknown run is kNotFound.
TEST_F(ClientTest, APriorityOrdersTheAdmissionOfALimitedFlowsWaitingTasks) {
  const auto ranked =
      Flow<"wRanked", int>({.concurrency_limit = 1}).step<"work">([](int x) { return x; });
  compile(ranked);
  for (int i = 1; i <= 3; ++i) ASSERT_THAT(client_->start_run(ranked, i), IsOk());
  std::string urgent;
  ASSERT_THAT(client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<std::string> run = tx.start_run(ranked, 4);
    if (!run.ok()) return run.status();
    urgent = *run;
    return tx.set_run_priority(urgent, 10);
  }),
              IsOk());
  const std::string admitted_order =
      "select string_agg(r.input::text, ',' order by t.priority desc, t.queued_at, t.run_id) "
      "from pgflow.step_tasks t join pgflow.runs r using (run_id) "
      "where t.flow_slug = 'wRanked' and t.status = 'queued' and t.gate = 'held'";
  EXPECT_EQ(sql(admitted_order), "4,2,3") << "run 1 holds the slot; 4 goes next";
  const std::string third = sql("select run_id from pgflow.runs where input = '3'");
  ASSERT_THAT(client_->set_run_priority(third, 5), IsOk());
  EXPECT_EQ(sql(admitted_order), "4,3,2");

  // A worker drains them one at a time, in that order.
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(ranked, test_worker_config(db_->url())));
  ASSERT_THAT(wait_until(*conn_, "select count(*) = 4 from pgflow.runs where status = 'completed'"),
              IsOk());
  EXPECT_EQ(sql("select string_agg(r.input::text, ',' order by t.started_at, t.run_id) "
                "from pgflow.step_tasks t join pgflow.runs r using (run_id) "
                "where t.flow_slug = 'wRanked'"),
            "1,4,3,2");
  EXPECT_THAT(
      client_->set_run_priority("00000000-0000-0000-0000-000000000000", 1),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("00000000-0000-0000-0000-000000000000")));
  EXPECT_THAT(client_->set_run_priority("not-a-uuid", 1),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not-a-uuid")));
}

// A concurrency key shares a limit of 1 between tenants: with six runs of one tenant waiting
// before a second tenant's two, the second joins level with the first (which, waiting since
// earlier, goes once more), then they alternate, instead of the first's backlog draining first.
TEST_F(ClientTest, AConcurrencyKeyServesTenantsInTurnThroughALimit) {
  const auto shared = Flow<"wTenants", json>(
                          {.concurrency_limit = 1, .concurrency_key = {.path = "account.tenant"}})
                          .step<"work">([](const json& input) { return input.size(); });
  compile(shared);
  for (int i = 0; i < 6; ++i)
    ASSERT_THAT(client_->start_run(shared, json{{"account", {{"tenant", "noisy"}}}}), IsOk());
  for (int i = 0; i < 2; ++i)
    ASSERT_THAT(client_->start_run(shared, json{{"account", {{"tenant", "quiet"}}}}), IsOk());

  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(shared, test_worker_config(db_->url())));
  ASSERT_THAT(wait_until(*conn_, "select count(*) = 8 from pgflow.runs where status = 'completed'"),
              IsOk());
  EXPECT_EQ(sql("select string_agg(t.concurrency_key, ',' order by t.started_at, t.run_id) "
                "from pgflow.step_tasks t where t.flow_slug = 'wTenants'"),
            "noisy,noisy,quiet,noisy,quiet,noisy,noisy,noisy");
}

// A database migrated before 0007 has no lean start: the error says what to do.
TEST_F(ClientTest, TheLeanStartOnAnOlderSchemaSaysToMigrate) {
  compile(wf::sequential);
  ASSERT_THAT(conn_->exec("drop function pgflow.start_run(text, jsonb, uuid)"), IsOk());
  EXPECT_THAT(client_->start_run("wSequential", 1),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("pgflow.start_run"), HasSubstr("run `pgflow migrate`"))));
}

TEST_F(ClientTest, UnknownRunIsNotFound) {
  EXPECT_THAT(
      client_->get_run("00000000-0000-0000-0000-000000000000"),
      StatusIs(absl::StatusCode::kNotFound, HasSubstr("00000000-0000-0000-0000-000000000000")));
}

TEST_F(ClientTest, WaitForRunReturnsTheFinalStateOnceAWorkerFinishesIt) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState started, client_->start_flow(wf::sequential, 1));
  // The worker starts only once the client is waiting (its connection has read the run, after
  // LISTEN), so the run's completion event is what ends the wait. The worker lives until the end
  // of the test.
  std::optional<absl::StatusOr<EdgeWorker>> worker;
  std::jthread starter([&] {
    absl::StatusOr<pg::Connection> watcher = pg::Connection::open(db_->url());
    absl::Status waiting =
        watcher.ok() ? wait_until(*watcher,
                                  "select exists (select 1 from pg_stat_activity "
                                  "where datname = current_database() and pid <> pg_backend_pid() "
                                  "and query like 'select pgflow.get_run_with_states%')")
                     : watcher.status();
    if (!waiting.ok()) {
      worker.emplace(waiting);
      return;
    }
    worker.emplace(EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
  });
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(started.run_id, std::chrono::seconds(60)));
  starter.join();
  ASSERT_TRUE(worker.has_value());
  ASSERT_THAT(worker->status(), IsOk());
  EXPECT_EQ(done.status, pgflow::RunStatus::kCompleted);
  EXPECT_EQ(done.output, json({{"c", 7}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(int c, done.step("c")->output_as<int>());
  EXPECT_EQ(c, 7);
  // Times are absl::Time, in order: the run started before its steps, each step started before
  // it completed, and the run completed last; the database's clock is this machine's.
  ASSERT_TRUE(done.completed_at.has_value());
  for (const StepState& step : done.steps) {
    ASSERT_TRUE(step.started_at && step.completed_at) << step.step_slug;
    EXPECT_LE(done.started_at, *step.started_at);
    EXPECT_LE(*step.started_at, *step.completed_at);
    EXPECT_LE(*step.completed_at, *done.completed_at);
  }
  EXPECT_LT(absl::AbsDuration(absl::Now() - *done.completed_at), absl::Hours(1))
      << "not misread by hours";
}

// With pgflow.notify_events = off no run event arrives; wait_for_run still returns the final
// state, by re-reading the run (at least once a second).
TEST_F(ClientTest, WaitForRunEndsWhenEventsAreOff) {
  compile(wf::sequential);
  ASSERT_THAT(
      conn_->exec("do $$ begin execute format('alter database %I set pgflow.notify_events = off', "
                  "current_database()); end $$"),
      IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Client quiet, Client::connect({.connection_string = db_->url()}));
  std::string setting;
  ASSERT_THAT(quiet.in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<Rows> rows = tx.exec("show pgflow.notify_events");
    if (!rows.ok()) return rows.status();
    setting = rows->at(0).at(0).value_or("");
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_EQ(setting, "off");  // the client's sessions see the database's setting
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState started, quiet.start_flow(wf::sequential, 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              quiet.wait_for_run(started.run_id, std::chrono::seconds(30)));
  EXPECT_EQ(done.status, pgflow::RunStatus::kCompleted);
  EXPECT_EQ(done.output, json({{"c", 7}}));
}

TEST_F(ClientTest, WaitForRunTimesOutWhenNothingHappens) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow("wSequential", 1));
  EXPECT_THAT(client_->wait_for_run(run.run_id, std::chrono::milliseconds(300)),
              StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr(run.run_id)));
}

// milliseconds::max() waits without a limit (unchecked, now() + max wrapped into the past and
// the wait ended after one read with kDeadlineExceeded).
TEST_F(ClientTest, WaitForRunWithTheLargestTimeoutWaitsForTheEnd) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow(wf::sequential, 1));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(run.run_id, std::chrono::milliseconds::max()));
  EXPECT_EQ(done.status, pgflow::RunStatus::kCompleted);
}

TEST_F(ClientTest, TypedStartAndTypedOutput) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::conditional, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run,
                              client_->start_flow(wf::conditional, json{{"vip", true}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(run.run_id, std::chrono::seconds(30)));
  using Output = FlowOutput<decltype(wf::conditional)>;
  PGFLOW_ASSERT_OK_AND_ASSIGN(Output out, done.output_as<Output>());
  EXPECT_EQ(out.get<"report">(), "gift");
  EXPECT_EQ(out.get<"archive">(), std::nullopt);  // audit was skipped with skip-cascade
  EXPECT_THAT(done.step("vip")->output_as<int>(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("step vip")));
}

// wf::conditional's signature, as a producer that does not compile its handlers declares it
// (the flow is visible here, so pgflow::implements checks the two match).
using ConditionalSignature =
    FlowSignature<"wConditional", json, Step<"root", json>, Step<"vip", std::string>,
                  Step<"audit", int>, OptionalLeaf<"archive", int>, Leaf<"report", std::string>>;
[[maybe_unused]] const auto checked_conditional = implements<ConditionalSignature>(wf::conditional);
static_assert(
    std::is_same_v<FlowOutput<ConditionalSignature>, FlowOutput<decltype(wf::conditional)>>);

TEST_F(ClientTest, AProducerStartsAndReadsARunThroughTheFlowsSignature) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::conditional, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string run_id,
                              client_->start_run(ConditionalSignature{}, json{{"vip", true}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(run_id, std::chrono::seconds(30)));
  EXPECT_EQ(done.flow_slug, "wConditional");
  using Output = FlowOutput<ConditionalSignature>;
  PGFLOW_ASSERT_OK_AND_ASSIGN(Output out, done.output_as<Output>());
  EXPECT_EQ(out.get<"report">(), "gift");
  EXPECT_EQ(out.get<"archive">(), std::nullopt);
  using Vip = StepOutput<ConditionalSignature, "vip">;
  EXPECT_THAT(done.step("vip")->output_as<Vip>(), IsOkAndHolds(std::string("gift")));

  // The other alias starts take a signature too; one key, one run.
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart first,
                              client_->start_run_idempotent(ConditionalSignature{}, json{}, "k1"));
  PGFLOW_ASSERT_OK_AND_ASSIGN(IdempotentStart again,
                              client_->start_run_idempotent(ConditionalSignature{}, json{}, "k1"));
  EXPECT_TRUE(first.created);
  EXPECT_FALSE(again.created);
  EXPECT_EQ(again.run_id, first.run_id);
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState started,
                              client_->start_flow(ConditionalSignature{}, json{{"vip", false}}));
  EXPECT_EQ(started.flow_alias, "wConditional");
}

TEST_F(ClientTest, StartsARunAtomicallyWithTheCallersData) {
  compile(wf::sequential);
  pg::Connection& conn = *conn_;
  ASSERT_THAT(conn.exec("create table orders (id serial primary key, item text not null)"), IsOk());

  std::string run_id;
  ASSERT_THAT(client_->in_transaction([&](Transaction& tx) -> absl::Status {
    absl::StatusOr<Rows> order =
        tx.exec("insert into orders (item) values ($1) returning id", {"book"});
    if (!order.ok()) return order.status();
    absl::StatusOr<RunState> run = tx.start_flow("wSequential", std::stoi(*(*order)[0][0]));
    if (!run.ok()) return run.status();
    run_id = run->run_id;
    return absl::OkStatus();
  }),
              IsOk());
  EXPECT_EQ(*query_text(conn, "select count(*) from orders"), "1");
  EXPECT_EQ(*query_text(conn, "select count(*) from pgflow.runs where run_id = $1::uuid", {run_id}),
            "1");

  // A failing body rolls back both the business row and the run.
  absl::Status failed = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    if (auto r = tx.exec("insert into orders (item) values ('lamp')"); !r.ok()) return r.status();
    if (auto r = tx.start_flow("wSequential", 2); !r.ok()) return r.status();
    return absl::AbortedError("payment declined");
  });
  EXPECT_THAT(failed, StatusIs(absl::StatusCode::kAborted, HasSubstr("payment declined")));
  EXPECT_EQ(*query_text(conn, "select count(*) from orders"), "1");
  EXPECT_EQ(*query_text(conn, "select count(*) from pgflow.runs"), "1");
}

TEST_F(ClientTest, ATransactionWithAnIgnoredFailedStatementIsReportedRolledBack) {
  compile(wf::sequential);
  ASSERT_THAT(conn_->exec("create table orders (id serial primary key, item text not null)"),
              IsOk());
  absl::Status s = client_->in_transaction([&](Transaction& tx) -> absl::Status {
    (void)tx.exec("insert into orders (item) values ('kept?')");
    (void)tx.exec("insert into orders (item) values (null)");  // fails; the body ignores it
    return absl::OkStatus();
  });
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kAborted, HasSubstr("rolled back")));
  EXPECT_EQ(sql("select count(*) from orders"), "0");
}

TEST_F(ClientTest, WaitForRunAcceptsAnyUuidSpelling) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow("wSequential", 1));
  std::string upper = run.run_id;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState done,
                              client_->wait_for_run(upper, std::chrono::seconds(30)));
  EXPECT_EQ(done.status, pgflow::RunStatus::kCompleted);
}

TEST_F(ClientTest, SubscribersReceiveARunsEvents) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(EdgeWorker worker,
                              EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
  std::mutex mu;
  std::condition_variable delivered;
  std::vector<RunEvent> events;
  std::optional<Subscription> sub;
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(Subscription s, client_->subscribe([&](const RunEvent& e) {
      {
        std::lock_guard<std::mutex> lock(mu);
        events.push_back(e);
      }
      delivered.notify_all();
    }));
    sub.emplace(std::move(s));
  }
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client_->start_flow("wSequential", 1));
  ASSERT_THAT(client_->wait_for_run(run.run_id, std::chrono::seconds(30)), IsOk());
  // run:completed is published in the same transaction that completes the run; the subscriber
  // thread delivers it on its own schedule. (The 60 s only guards against hanging.)
  {
    std::unique_lock<std::mutex> lock(mu);
    EXPECT_TRUE(delivered.wait_for(lock, std::chrono::seconds(60), [&] {
      return !events.empty() && events.back().event == "run:completed";
    }));
  }
  sub.reset();
  std::vector<std::string> names;
  for (const RunEvent& e : events) {
    EXPECT_EQ(e.run_id, run.run_id);
    EXPECT_EQ(e.flow_slug, "wSequential");
    names.push_back(e.event + (e.step_slug.empty() ? "" : ":" + e.step_slug));
  }
  EXPECT_EQ(names, (std::vector<std::string>{"run:started", "step:started:a", "step:completed:a",
                                             "step:started:b", "step:completed:b", "step:started:c",
                                             "step:completed:c", "run:completed"}));
}

// Any login may NOTIFY on the events channel: payloads that are not pgflow's events (fields
// that are not strings, not an object, not JSON) are skipped by subscriptions and by
// wait_for_run, which go on to deliver the real events.
TEST_F(ClientTest, ForeignNotificationsOnTheEventsChannelAreIgnored) {
  compile(wf::sequential);
  std::atomic<int> completed_runs{0};
  std::atomic<int> foreign_events{0};
  PGFLOW_ASSERT_OK_AND_ASSIGN(Subscription sub, client_->subscribe([&](const RunEvent& e) {
    if (e.run_id.empty()) ++foreign_events;
    if (e.event == "run:completed") ++completed_runs;
  }));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState started, client_->start_flow(wf::sequential, 1));
  // Forged payloads keep arriving while the subscription and wait_for_run listen; after a few
  // rounds a worker finishes the run.
  std::atomic<bool> done_waiting{false};
  std::optional<absl::StatusOr<EdgeWorker>> worker;
  std::jthread forger([&] {
    absl::StatusOr<pg::Connection> forging = pg::Connection::open(db_->url());
    for (int round = 0; forging.ok() && !done_waiting; ++round) {
      (void)forging->exec(
          "select pg_notify('pgflow_events', p) from unnest(array['{\"run_id\": 1, "
          "\"event\": true}', '[1, 2]', 'not json', '{\"status\": {\"a\": 1}}']) p");
      if (round == 10) {
        worker.emplace(EdgeWorker::start(wf::sequential, test_worker_config(db_->url())));
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    if (!forging.ok()) worker.emplace(forging.status());
  });
  absl::StatusOr<RunState> done = client_->wait_for_run(started.run_id, std::chrono::seconds(60));
  done_waiting = true;
  forger.join();
  ASSERT_THAT(done, IsOk());
  ASSERT_TRUE(worker.has_value());
  ASSERT_THAT(worker->status(), IsOk());
  EXPECT_EQ(done->status, pgflow::RunStatus::kCompleted);
  EXPECT_TRUE(wait_for([&] { return completed_runs.load() == 1; }));
  EXPECT_EQ(foreign_events.load(), 0);
}

TEST_F(ClientTest, ThePoolIsBounded) {
  compile(wf::sequential);
  PGFLOW_ASSERT_OK_AND_ASSIGN(Client small,
                              Client::connect({.connection_string = db_->url(),
                                               .max_connections = 1,
                                               .acquire_timeout = std::chrono::milliseconds(200)}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, small.start_flow("wSequential", 1));
  // One connection, held by an open transaction until the check below is done: the next call
  // waits acquire_timeout for one, then gives up.
  std::promise<void> held;
  std::promise<void> release;
  std::jthread holder([&] {
    (void)small.in_transaction([&](Transaction&) -> absl::Status {
      held.set_value();
      release.get_future().wait();
      return absl::OkStatus();
    });
  });
  held.get_future().wait();
  EXPECT_THAT(small.get_run(run.run_id),
              StatusIs(absl::StatusCode::kResourceExhausted,
                       HasSubstr("all 1 pooled connections stayed busy")));
  release.set_value();
  holder.join();
  // Released, the connection serves the next call.
  EXPECT_THAT(small.get_run(run.run_id), IsOk());
}

// After its pooled connections die (as in a server restart), a read is retried once on a fresh
// connection: with a pool of one, the dead lease is given back first; with idle connections
// left, those are closed too rather than leased dead.
TEST_F(ClientTest, CallsRecoverWhenEveryPooledConnectionDied) {
  compile(wf::sequential);
  // Its own application name, so only this client's connections are ended.
  const std::string url = db_->url() + (db_->url().find('?') == std::string::npos ? "?" : "&") +
                          "application_name=dying_pool";
  const std::string kill_clients =
      "select count(pg_terminate_backend(pid)) from pg_stat_activity "
      "where datname = current_database() and application_name = 'dying_pool'";
  for (int pool_size : {1, 2}) {
    SCOPED_TRACE(pool_size);
    PGFLOW_ASSERT_OK_AND_ASSIGN(
        Client client, Client::connect({.connection_string = url,
                                        .max_connections = pool_size,
                                        .acquire_timeout = std::chrono::milliseconds(300)}));
    PGFLOW_ASSERT_OK_AND_ASSIGN(RunState run, client.start_flow("wSequential", 1));
    // Open as many connections as the pool holds: a read inside a transaction needs a second.
    ASSERT_THAT(client.in_transaction([&](Transaction&) -> absl::Status {
      return pool_size > 1 ? client.get_run(run.run_id).status() : absl::OkStatus();
    }),
                IsOk());
    ASSERT_THAT(query_text(*conn_, kill_clients), IsOkAndHolds(std::to_string(pool_size)));
    ASSERT_THAT(wait_until(*conn_,
                           "select count(*) = 0 from pg_stat_activity where datname = "
                           "current_database() and application_name = 'dying_pool'"),
                IsOk());
    EXPECT_THAT(client.get_run(run.run_id), IsOk());
    ASSERT_THAT(query_text(*conn_, kill_clients), IsOkAndHolds("1"));
    // The run does not finish (no worker): the wait reaches its deadline, not a dead connection.
    EXPECT_THAT(client.wait_for_run(run.run_id, std::chrono::milliseconds(300)),
                StatusIs(absl::StatusCode::kDeadlineExceeded, HasSubstr(run.run_id)));
  }
}

TEST(ClientConnectTest, RefusesADatabaseWithoutPgflow) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase empty, TestDatabase::empty());
  EXPECT_THAT(Client::connect({.connection_string = empty.url()}),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("pgflow migrate")));
  EXPECT_THAT(Client::connect({.connection_string = empty.url(), .max_connections = 0}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_connections")));
}

// Refusals that retrying cannot fix end at once with their own code, not after the
// connect_timeout as "unreachable": a role that may not log in, a database it may not connect to.
TEST(ClientConnectTest, ARoleWithoutLoginOrConnectPrivilegeFailsAtOnce) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::from_template());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection admin, pg::Connection::open(db.url()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result names,
                              admin.exec("select current_database(), current_user"));
  const std::string database(names.text(0, 0)), superuser(names.text(0, 1));
  const std::string no_login = "nologin_" + database, no_connect = "noconnect_" + database;
  ASSERT_THAT(admin.exec_script("create role " + no_login + " nologin; create role " + no_connect +
                                " login; revoke connect on database " + database + " from public;"),
              IsOk());
  ASSERT_NE(db.url().find(superuser + "@"), std::string::npos) << db.url();
  auto url_as = [&](const std::string& role) {
    std::string url = db.url();
    url.replace(url.find(superuser + "@"), superuser.size(), role);
    return url;
  };
  // (5 s: were these retried, each would end as kUnavailable "unreachable for the connect_timeout")
  EXPECT_THAT(Client::connect({.connection_string = url_as(no_login),
                               .connect_timeout = std::chrono::seconds(5)}),
              StatusIs(absl::StatusCode::kUnauthenticated, HasSubstr("not permitted to log in")));
  EXPECT_THAT(
      Client::connect(
          {.connection_string = url_as(no_connect), .connect_timeout = std::chrono::seconds(5)}),
      StatusIs(absl::StatusCode::kPermissionDenied, HasSubstr("permission denied for database")));
  (void)admin.exec_script("drop role " + no_login + "; drop role " + no_connect + ";");
}

}  // namespace
}  // namespace pgflow
