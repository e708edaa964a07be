#include "pgflow/migrate.h"

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

using ::testing::HasSubstr;
using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using pgflow::testing::TestDatabase;

int library_version() { return bundled_migrations().back().version; }

TEST(Migrate, FreshDatabaseGetsPgmqAndEveryMigration) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus before, schema_status(db.url()));
  EXPECT_EQ(before.pgmq_mode, "missing");
  EXPECT_TRUE(before.applied.empty());
  EXPECT_EQ(before.pending.size(), bundled_migrations().size());

  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus after, schema_status(db.url()));
  EXPECT_EQ(after.pgmq_mode, "bundled");  // Debian has no pgmq extension package
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
  EXPECT_THAT(migrate(db.url()),
              StatusIs(absl::StatusCode::kFailedPrecondition,
                       HasSubstr(bundled_migrations()[0].file_name())));
  // Nothing after the mismatch was applied.
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus s, schema_status(db.url()));
  EXPECT_EQ(s.applied.size(), 1u);
}

TEST(Migrate, DatabaseNewerThanLibraryIsAnError) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  ASSERT_THAT(migrate(db.url()), IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  ASSERT_THAT(conn.exec("insert into pgflow.schema_migrations (version, name, checksum) "
                        "values ($1, 'from_the_future', 'x')",
                        {std::to_string(library_version() + 1)}),
              IsOk());
  EXPECT_THAT(migrate(db.url()),
              StatusIs(absl::StatusCode::kFailedPrecondition, HasSubstr("newer than this library")));
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

TEST(Migrate, FailingMigrationRollsBackAndNamesTheFile) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  // A pre-existing object that migration 0001 needs to create makes it fail.
  ASSERT_THAT(conn.exec_script("create schema pgflow; create table pgflow.flows (x int);"), IsOk());
  absl::Status s = migrate(db.url());
  // The server's error (a duplicate object, class 42) keeps its code and SQLSTATE and names the file.
  EXPECT_THAT(s, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(bundled_migrations()[0].file_name())));
  EXPECT_EQ(sql_state(s).value_or("").substr(0, 2), "42") << s;
  PGFLOW_ASSERT_OK_AND_ASSIGN(SchemaStatus status, schema_status(db.url()));
  EXPECT_TRUE(status.applied.empty());
  // Nothing of the failed migration is left: no function, no other table, the table it tripped
  // over unchanged.
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      pg::Result left,
      conn.exec("select (select count(*) from pg_proc where pronamespace = 'pgflow'::regnamespace)::text, "
                "(select string_agg(relname, ',' order by relname) from pg_class "
                " where relnamespace = 'pgflow'::regnamespace and relkind in ('r', 'p')), "
                "(select string_agg(attname, ',') from pg_attribute "
                " where attrelid = 'pgflow.flows'::regclass and attnum > 0 and not attisdropped)"));
  EXPECT_EQ(left.text(0, 0), "0");
  EXPECT_THAT(std::string(left.text(0, 1)), ::testing::AnyOf("flows", "flows,schema_migrations"));
  EXPECT_EQ(left.text(0, 2), "x");
}

}  // namespace
}  // namespace pgflow
