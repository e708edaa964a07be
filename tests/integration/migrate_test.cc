#include "pgflow/migrate.h"

#include <chrono>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/connection.h"
#include "pgflow/status.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using pgflow::testing::TestDatabase;
using ::testing::AllOf;
using ::testing::HasSubstr;

int library_version() { return bundled_migrations().back().version; }

// What a newer library's migrate leaves in the ledger: a version this library does not know.
absl::Status record_a_future_migration(pg::Connection& conn) {
  return conn
      .exec(
          "insert into pgflow.schema_migrations (version, name, checksum) "
          "values ($1, 'from_the_future', 'x')",
          {std::to_string(library_version() + 1)})
      .status();
}

TEST(Migrate, FreshDatabaseGetsPgmqAndEveryMigration) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus before, schema_status(db.url()));
  EXPECT_EQ(before.pgmq_mode, "missing");
  EXPECT_TRUE(before.applied.empty());
  EXPECT_EQ(before.pending.size(), bundled_migrations().size());

  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus after, schema_status(db.url()));
  // The extension when the server offers it (the test command's extension pass), else the
  // bundled layer (Debian has no pgmq package).
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection admin, pg::Connection::open(db.url()));
  if (admin.exec("select exists (select 1 from pg_available_extensions where name = 'pgmq')")
          .value()
          .scalar() == "t") {
    EXPECT_EQ(after.pgmq_mode, "extension 1.5.1");
  } else {
    EXPECT_EQ(after.pgmq_mode, "bundled");
  }
  EXPECT_TRUE(after.pending.empty());
  ASSERT_EQ(after.applied.size(), bundled_migrations().size());
  for (size_t i = 0; i < after.applied.size(); ++i) {
    EXPECT_EQ(after.applied[i].migration.version, bundled_migrations()[i].version);
    EXPECT_EQ(after.applied[i].migration.checksum, bundled_migrations()[i].checksum);
    EXPECT_EQ(after.applied[i].migration.checksum.size(), 64u);
  }
}

TEST(Migrate, RerunIsANoOp) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus first, schema_status(db.url()));
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus second, schema_status(db.url()));
  ASSERT_EQ(first.applied.size(), second.applied.size());
  for (size_t i = 0; i < first.applied.size(); ++i) {
    EXPECT_EQ(first.applied[i].applied_at, second.applied[i].applied_at);
  }
}

TEST(Migrate, TargetVersionStopsEarly) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url(), {.target_version = 1}), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus s, schema_status(db.url()));
  ASSERT_EQ(s.applied.size(), 1u);
  EXPECT_EQ(s.pending.size(), bundled_migrations().size() - 1);
}

TEST(Migrate, EditedAppliedMigrationIsAnErrorNamingTheFile) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url(), {.target_version = 1}), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  // What the ledger would hold had 0001 been applied from a different file.
  ASSERT_THAT(conn.exec("update pgflow.schema_migrations set checksum = repeat('0', 64) "
                        "where version = 1"),
              IsOk());
  EXPECT_THAT(migrate(db.url()), StatusIs(absl::StatusCode::kFailedPrecondition,
                                          HasSubstr(bundled_migrations()[0].file_name())));
  // Nothing after the mismatch was applied.
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus s, schema_status(db.url()));
  EXPECT_EQ(s.applied.size(), 1u);
}

TEST(Migrate, DatabaseNewerThanLibraryIsAnError) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_THAT(record_a_future_migration(conn), IsOk());
  EXPECT_THAT(migrate(db.url()), StatusIs(absl::StatusCode::kFailedPrecondition,
                                          HasSubstr("newer than this library")));
}

TEST(Migrate, ConcurrentMigratorsApplyEachMigrationOnce) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  std::vector<absl::Status> results(4);
  {
    std::vector<std::jthread> threads;
    for (auto& r : results) threads.emplace_back([&r, &db] { r = migrate(db.url()); });
  }
  for (const auto& r : results) EXPECT_THAT(r, IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Result n,
                              conn.exec("select count(*) from pgflow.schema_migrations"));
  EXPECT_EQ(n.scalar(), std::to_string(bundled_migrations().size()));
}

// A role's or database's default isolation does not reach migrate: each of its transactions is
// READ COMMITTED, so a migrator that waited for another's lock reads what that one committed.
// Under a SERIALIZABLE default, a later migrator read a ledger older than its lock (its snapshot
// was taken before the wait): it re-ran a migration applied meanwhile, or refused the schema as
// one no ledger records.
TEST(Migrate, ConcurrentMigratorsUnderASerializableDefaultApplyEachMigrationOnce) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  {
    PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection admin, pg::Connection::open(db.url()));
    ASSERT_THAT(admin.exec_script("do $$ begin execute format('alter database %I set "
                                  "default_transaction_isolation = serializable', "
                                  "current_database()); end $$"),
                IsOk());
  }
  std::vector<absl::Status> results(4);
  {
    std::vector<std::jthread> threads;
    for (auto& r : results) threads.emplace_back([&r, &db] { r = migrate(db.url()); });
  }
  for (const auto& r : results) EXPECT_THAT(r, IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_EQ(conn.exec("show transaction_isolation").value().scalar(), "serializable")
      << "the default held for these sessions";
  EXPECT_EQ(conn.exec("select count(*) from pgflow.schema_migrations").value().scalar(),
            std::to_string(bundled_migrations().size()));
}

// A migrate with nothing to do changes nothing: no DDL on the ledger (which needs CREATE on the
// database and the ledger's ownership, and locks the ledger), and a ledger it refuses (newer
// than the library) is refused before anything is touched.
TEST(Migrate, AMigrateWithNothingToDoRunsNoDdl) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_THAT(conn.exec("comment on table pgflow.schema_migrations is 'mine'"), IsOk());
  const char* comment = "select obj_description('pgflow.schema_migrations'::regclass, 'pg_class')";
  ASSERT_THAT(migrate(db.url()), IsOk());
  EXPECT_EQ(conn.exec(comment).value().scalar(), "mine") << "an up-to-date migrate";
  ASSERT_THAT(record_a_future_migration(conn), IsOk());
  EXPECT_THAT(migrate(db.url()), StatusIs(absl::StatusCode::kFailedPrecondition,
                                          HasSubstr("newer than this library")));
  EXPECT_EQ(conn.exec(comment).value().scalar(), "mine") << "a refused migrate";
}

// schema_status says what migrate would refuse, instead of calling the database up to date (a
// newer ledger) or listing an edited migration as applied.
TEST(Migrate, StatusSaysWhatMigrateWouldRefuse) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus fine, schema_status(db.url()));
  EXPECT_EQ(fine.problem, std::nullopt);
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_THAT(conn.exec("update pgflow.schema_migrations set checksum = repeat('0', 64) "
                        "where version = 2"),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus edited, schema_status(db.url()));
  EXPECT_THAT(edited.problem.value_or(""), HasSubstr(bundled_migrations()[1].file_name()));
  ASSERT_THAT(conn.exec("update pgflow.schema_migrations set checksum = $1 where version = 2",
                        {bundled_migrations()[1].checksum}),
              IsOk());
  ASSERT_THAT(record_a_future_migration(conn), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus newer, schema_status(db.url()));
  EXPECT_THAT(newer.problem.value_or(""), HasSubstr("newer than this library"));
}

TEST(Migrate, AnotherMigratorHoldingTheLockIsAbortedWithItsSqlState) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection other, pg::Connection::open(db.url()));
  // The migrators' advisory lock, as docs/upgrading.md names it for operators.
  ASSERT_THAT(other.exec("select pg_advisory_lock(110386046168183)").status(), IsOk());
  absl::Status s =
      migrate(db.url(), {.target_version = std::nullopt, .lock_wait = std::chrono::seconds(1)});
  EXPECT_THAT(
      s, StatusIs(absl::StatusCode::kAborted, HasSubstr("waiting for another pgflow migrator")));
  EXPECT_EQ(sql_state(s), "55P03") << "the SQLSTATE travels with the reworded status";
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus after, schema_status(db.url()));
  EXPECT_TRUE(after.applied.empty()) << "nothing applied";
}

// A migration's table locks wait at most lock_wait, also where the migration sets no bound of
// its own (0015 takes step_tasks, step_states and runs ACCESS EXCLUSIVE): a session idle in a
// transaction that read step_tasks makes migrate fail with nothing changed, not wait forever
// while every claim and start queues behind its lock request.
TEST(Migrate, AMigrationWaitsForATableLockAtMostLockWait) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url(), {.target_version = 14}), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection reader, pg::Connection::open(db.url()));
  ASSERT_THAT(reader.exec_script("begin; select 1 from pgflow.step_tasks limit 1;"), IsOk());
  absl::Status s = migrate(db.url(), {.target_version = 15, .lock_wait = std::chrono::seconds(1)});
  EXPECT_EQ(sql_state(s), "55P03") << s;
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus held, schema_status(db.url()));
  EXPECT_EQ(held.applied.back().migration.version, 14) << "nothing applied";
  ASSERT_THAT(reader.exec_script("commit"), IsOk());
  EXPECT_THAT(migrate(db.url(), {.target_version = 15}), IsOk());
}

// One place says where the database is: an empty connection string means DATABASE_URL.
class MigrateDatabaseUrl : public ::testing::Test {
 protected:
  void SetUp() override {
    if (const char* old = std::getenv("DATABASE_URL")) saved_ = old;
  }
  void TearDown() override {
    if (saved_) {
      setenv("DATABASE_URL", saved_->c_str(), 1);
    } else {
      unsetenv("DATABASE_URL");
    }
  }
  std::optional<std::string> saved_;
};

TEST_F(MigrateDatabaseUrl, EmptyConnectionStringUsesDatabaseUrl) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  setenv("DATABASE_URL", db.url().c_str(), 1);
  ASSERT_THAT(migrate(), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus s, schema_status());
  EXPECT_TRUE(s.pending.empty());
  EXPECT_EQ(s.applied.size(), bundled_migrations().size());
}

TEST_F(MigrateDatabaseUrl, NeitherConnectionStringNorDatabaseUrlIsAnError) {
  unsetenv("DATABASE_URL");
  EXPECT_THAT(migrate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DATABASE_URL is not set")));
  EXPECT_THAT(schema_status().status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("DATABASE_URL is not set")));
}

TEST(Migrate, FailingMigrationRollsBackAndNamesTheFile) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  // A pre-existing object that migration 0001 needs to create makes it fail (a table other than
  // pgflow.flows: a schema with flows but no ledger is one to adopt, see below).
  ASSERT_THAT(conn.exec_script("create schema pgflow; create table pgflow.steps (x int);"), IsOk());
  absl::Status s = migrate(db.url());
  // The server's error (a duplicate object, class 42) keeps its code and SQLSTATE and names the file.
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument,
                          HasSubstr(bundled_migrations()[0].file_name())));
  EXPECT_EQ(sql_state(s).value_or("").substr(0, 2), "42") << s;
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(db.url()));
  EXPECT_TRUE(status.applied.empty());
  // Nothing of the failed migration is left: no function, no other table, the table it tripped
  // over unchanged.
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result left,
      conn.exec("select (select count(*) from pg_proc where pronamespace = "
                "'pgflow'::regnamespace)::text, "
                "(select string_agg(relname, ',' order by relname) from pg_class "
                " where relnamespace = 'pgflow'::regnamespace and relkind in ('r', 'p')), "
                "(select string_agg(attname, ',') from pg_attribute "
                " where attrelid = 'pgflow.steps'::regclass and attnum > 0 and not attisdropped)"));
  EXPECT_EQ(left.text(0, 0), "0");
  EXPECT_THAT(std::string(left.text(0, 1)), ::testing::AnyOf("steps", "schema_migrations,steps"));
  EXPECT_EQ(left.text(0, 2), "x");
}

// ---- adopting a schema installed by upstream's tooling ----

// A fingerprint of everything in schema pgflow (objects, columns, function bodies, privileges)
// and whether a ledger or a leftover schema exists: equal before and after means nothing changed.
std::string schema_fingerprint(pg::Connection& conn) {
  absl::StatusOr<pg::Result> r = conn.exec(R"sql(
    select md5(concat_ws('|',
      (select string_agg(c.relname || ':' || c.relkind || ':' || coalesce(c.relacl::text, ''), ',' order by c.relname)
         from pg_class c where c.relnamespace = 'pgflow'::regnamespace),
      (select string_agg(c.relname || '.' || a.attname || ':' || format_type(a.atttypid, a.atttypmod), ','
                         order by c.relname, a.attnum)
         from pg_attribute a join pg_class c on c.oid = a.attrelid
         where c.relnamespace = 'pgflow'::regnamespace and a.attnum > 0 and not a.attisdropped),
      (select string_agg(p.oid::regprocedure::text || ':' || md5(p.prosrc) || ':' || coalesce(p.proacl::text, ''),
                         ',' order by p.oid::regprocedure::text)
         from pg_proc p where p.pronamespace = 'pgflow'::regnamespace),
      (select string_agg(f.flow_slug, ',' order by f.flow_slug) from pgflow.flows f),
      (select count(*) from pgflow.runs)::text)) || ' ledger:' || (to_regclass('pgflow.schema_migrations') is not null)
      || ' leftover:' || (to_regnamespace('pgflow_adopting') is not null))sql");
  return r.ok() ? std::string(r->scalar()) : std::string(r.status().message());
}

// What upstream's tooling leaves: the 0.16.0 schema (our 0001), no ledger, a function only
// upstream has, a body that differs from ours, a looser privilege, and live data.
// `empty_ledger`: an empty ledger table instead of none (left by an older migrator's failed try).
void make_upstream_install(pg::Connection& conn, const std::string& url,
                           bool empty_ledger = false) {
  ASSERT_THAT(migrate(url, {.target_version = 1}), IsOk());
  ASSERT_THAT(conn.exec_script(R"sql(
    select pgflow.create_flow('legacyOrders');
    select pgflow.add_step('legacyOrders', 'charge');
    select pgflow.start_flow('legacyOrders', '{"order": 7}');
    drop table pgflow.schema_migrations;
    -- (an upstream grant to a role of one of 0001's SECURITY DEFINER functions)
    do $$ begin execute format('create role %I', 'adopt_' || current_database()); end $$;
    do $$ begin execute format('grant execute on function pgflow.start_flow_with_states(text, jsonb, uuid) to %I',
                               'adopt_' || current_database()); end $$;
    create function pgflow.setup_ensure_workers_cron(function_name text) returns text
      language sql as $$ select 'scheduled ' || function_name $$;
    create or replace function pgflow.is_local() returns boolean language sql stable as $$ select true /* upstream */ $$;
    grant execute on function pgflow.get_run_with_states(uuid) to public;
  )sql"),
              IsOk());
  if (empty_ledger) {
    ASSERT_THAT(
        conn.exec_script(
            "create table pgflow.schema_migrations (version integer primary key, name text "
            "not null, checksum text not null, applied_at timestamptz not null default now())"),
        IsOk());
  }
}

// Drops the role make_upstream_install created (its grants are gone by then, or the database is).
void drop_upstream_role(pg::Connection& conn) {
  (void)conn.exec_script(
      "do $$ begin execute format('drop owned by %1$I; drop role %1$I', 'adopt_' || "
      "current_database()); end $$");
}

TEST(MigrateAdopt, UnrecordedSchemaIsRefusedWithoutAdoptAndNothingChanges) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  make_upstream_install(conn, db.url());
  const std::string before = schema_fingerprint(conn);
  EXPECT_THAT(migrate(db.url()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       AllOf(HasSubstr("no migration ledger records"), HasSubstr("--adopt"))));
  EXPECT_EQ(schema_fingerprint(conn), before);
  drop_upstream_role(conn);
}

TEST(MigrateAdopt, AdoptsAnUpstreamInstallKeepingItsDataAndItsOwnFunctions) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  make_upstream_install(conn, db.url());

  ASSERT_THAT(migrate(db.url(), {.target_version = std::nullopt,
                                 .lock_wait = std::chrono::seconds(60),
                                 .adopt_existing_schema = true}),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(db.url()));
  ASSERT_EQ(status.applied.size(), bundled_migrations().size())
      << "0001 adopted, then 0002+ applied";
  EXPECT_TRUE(status.pending.empty());
  EXPECT_TRUE(status.applied[0].adopted);
  EXPECT_EQ(status.applied[0].migration.checksum, bundled_migrations()[0].checksum);
  for (size_t i = 1; i < status.applied.size(); ++i) EXPECT_FALSE(status.applied[i].adopted) << i;

  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result after,
      conn.exec("select (select count(*) from pgflow.runs r where r.flow_slug = 'legacyOrders' "
                "         and r.input = '{\"order\": 7}' and r.status = 'started')::text, "
                "pgflow.setup_ensure_workers_cron('w'), "
                "(select prosrc from pg_proc where oid = 'pgflow.is_local()'::regprocedure) like "
                "'%upstream%', "
                "has_function_privilege('public', 'pgflow.get_run_with_states(uuid)', 'execute'), "
                "to_regnamespace('pgflow_adopting') is null"));
  EXPECT_EQ(after.text(0, 0), "1") << "the run started before the adoption is kept";
  EXPECT_EQ(after.text(0, 1), "scheduled w") << "a function only upstream has is kept";
  EXPECT_EQ(after.text(0, 2), "f") << "0001's function bodies replace upstream's";
  EXPECT_EQ(after.text(0, 3), "f") << "0001's privileges are applied";
  EXPECT_EQ(after.text(0, 4), "t") << "no leftover schema";

  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result role_grant,
      conn.exec("select has_function_privilege('adopt_' || current_database(), "
                "'pgflow.start_flow_with_states(text, jsonb, uuid)', 'execute')"));
  EXPECT_EQ(role_grant.scalar(), "f")
      << "a role's grant of a SECURITY DEFINER function of 0001 is revoked";

  // The adopted database works: the kept run reads through the new schema's functions.
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result run,
      conn.exec(
          "select pgflow.get_run_with_states(run_id) -> 'run' ->> 'status' from pgflow.runs"));
  ASSERT_EQ(run.rows(), 1);
  EXPECT_EQ(run.scalar(), "started");
  ASSERT_THAT(migrate(db.url()), IsOk()) << "and re-running migrate is a no-op";
  drop_upstream_role(conn);
}

TEST(MigrateAdopt, AnEmptyLedgerLeftBehindCountsAsNoLedger) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  make_upstream_install(conn, db.url(), /*empty_ledger=*/true);
  EXPECT_THAT(migrate(db.url()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("--adopt")));
  ASSERT_THAT(migrate(db.url(), {.target_version = std::nullopt,
                                 .lock_wait = std::chrono::seconds(60),
                                 .adopt_existing_schema = true}),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(db.url()));
  ASSERT_EQ(status.applied.size(), bundled_migrations().size());
  EXPECT_TRUE(status.applied[0].adopted);
  drop_upstream_role(conn);
}

TEST(Migrate, StatusReadsALedgerWrittenBeforeAdoptionExisted) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_THAT(conn.exec("alter table pgflow.schema_migrations drop column adopted").status(),
              IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(db.url()));
  EXPECT_EQ(status.applied.size(), bundled_migrations().size());
  for (const AppliedMigration& a : status.applied) EXPECT_FALSE(a.adopted);
  ASSERT_THAT(migrate(db.url()), IsOk()) << "migrate adds the column back";
}

TEST(MigrateAdopt, MismatchingSchemaIsRefusedListingEveryDifferenceAndNothingChanges) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  make_upstream_install(conn, db.url());
  // As an older (or locally changed) release would differ: a column missing, one extra, a
  // constraint changed, a function missing and one whose result differs.
  ASSERT_THAT(conn.exec_script(R"sql(
    alter table pgflow.step_tasks drop column error_message;
    alter table pgflow.flows add column description text;
    alter table pgflow.flows drop constraint opt_timeout_is_positive;
    drop function pgflow.calculate_retry_delay(numeric, int);
    drop function pgflow.get_run_with_states(uuid);
    create function pgflow.get_run_with_states(run_id uuid) returns json language sql as $$ select null::json $$;
    create function pgflow.start_flow(flow_slug text, input jsonb, run_id uuid, priority int default 0)
      returns setof pgflow.runs language sql as $$ select * from pgflow.runs where false $$;
  )sql"),
              IsOk());
  const std::string before = schema_fingerprint(conn);
  absl::Status s = migrate(db.url(), {.target_version = std::nullopt,
                                      .lock_wait = std::chrono::seconds(60),
                                      .adopt_existing_schema = true});
  EXPECT_THAT(
      s,
      StatusIs(
          absl::StatusCode::kFailedPrecondition,
          AllOf(HasSubstr("upgrade it to upstream pgflow 0.16.0"), HasSubstr("nothing was changed"),
                HasSubstr("missing column step_tasks.error_message"),
                HasSubstr("unexpected column flows.description"),
                HasSubstr("missing constraint flows.opt_timeout_is_positive"),
                HasSubstr("missing function calculate_retry_delay(base_delay numeric"),
                HasSubstr(
                    "function get_run_with_states(run_id uuid) is \"json\", expected \"jsonb\""),
                HasSubstr("unexpected overload function start_flow(flow_slug text, input jsonb, "
                          "run_id uuid, priority integer)"))));
  EXPECT_EQ(schema_fingerprint(conn), before) << "nothing changed";
  drop_upstream_role(conn);
}

}  // namespace
}  // namespace pgflow
