#include "pg/connection.h"

#include <chrono>
#include <thread>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pg/error.h"
#include "pgflow/status.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"

namespace pgflow::pg {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using pgflow::testing::TestDatabase;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

TEST(Connection, ParametersTravelAsTextNeverAsStatementText) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection conn, Connection::open(db.url()));
  const std::string hostile = "'); drop table x; --";
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      Result r, conn.exec("select $1::text as s, $2::bigint as n, $3::text is null as nul, "
                          "current_query() as q",
                          {hostile, "9223372036854775807", std::nullopt}));
  ASSERT_EQ(r.rows(), 1);
  EXPECT_EQ(r.text(0, r.column("s")), hostile);
  // The server received the placeholder, not the value spliced into the statement.
  EXPECT_THAT(r.text(0, r.column("q")), AllOf(HasSubstr("$1::text"), Not(HasSubstr("drop table"))));
  EXPECT_EQ(r.int64(0, r.column("n")).value(), INT64_MAX);
  EXPECT_EQ(r.boolean(0, r.column("nul")).value(), true);
  EXPECT_EQ(r.column("missing"), -1);
}

TEST(Connection, ErrorsCarrySqlStateAndCanonicalCode) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection conn, Connection::open(db.url()));
  auto r = conn.exec("select 1/0");
  EXPECT_THAT(r, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("division by zero")));
  EXPECT_EQ(sql_state(r.status()), "22012");
  auto missing = conn.exec("select pgflow.nothing()");
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kFailedPrecondition);
  // The connection stays usable after an error.
  EXPECT_THAT(conn.exec("select 1"), IsOk());
}

// An integrity violation's DETAIL quotes the row ("Failing row contains (...)") or the key:
// inputs and outputs, which a status (logged by workers) must not carry. The message still
// names the constraint; other errors keep their DETAIL.
TEST(Connection, IntegrityViolationsCarryNoRowData) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection conn, Connection::open(db.url()));
  ASSERT_THAT(conn.exec("create table t (id text primary key, body jsonb, "
                        "constraint small check (length(body::text) < 5))")
                  .status(),
              IsOk());
  auto checked = conn.exec("insert into t values ('k', '{\"card\": \"SECRET-1\"}')");
  EXPECT_EQ(sql_state(checked.status()), "23514");
  EXPECT_THAT(checked.status().message(), AllOf(HasSubstr("\"small\""), Not(HasSubstr("SECRET"))));
  ASSERT_THAT(conn.exec("insert into t values ('SECRET-2', '1')").status(), IsOk());
  auto duplicate = conn.exec("insert into t values ('SECRET-2', '2')");
  EXPECT_EQ(sql_state(duplicate.status()), "23505");
  EXPECT_THAT(duplicate.status().message(), Not(HasSubstr("SECRET")));
  auto other = conn.exec("do $$ begin raise exception 'boom' using detail = 'the detail'; end $$");
  EXPECT_THAT(other.status().message(), HasSubstr("the detail"));
}

TEST(Connection, RefusedConnectionNeverShowsPassword) {
  auto conn = Connection::open("postgresql://someone:sekret-pw@127.0.0.1:1/db");
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kUnavailable, Not(HasSubstr("sekret-pw"))));
  const std::string described =
      describe_conninfo("host=h port=5 user=u password=sekret-pw dbname=d");
  EXPECT_THAT(described, HasSubstr("host=h"));
  EXPECT_THAT(described, HasSubstr("dbname=d"));
  EXPECT_THAT(described, Not(HasSubstr("sekret-pw")));
  EXPECT_THAT(describe_conninfo("postgresql://u:sekret-pw@h:5/d"), Not(HasSubstr("sekret-pw")));
}

TEST(Connection, UnparsableConnectionStringNeverEchoesIt) {
  // An unescaped % in a URL password makes libpq quote the component in its error.
  auto conn = Connection::open("postgresql://someone:p%ss-secret@127.0.0.1:1/db");
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kInvalidArgument,
                             AllOf(HasSubstr("percent-encoded"), Not(HasSubstr("secret")))));
}

TEST(Connection, AMissingDatabaseIsNotATransientFailure) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::string url, pgflow::testing::cluster_url());
  auto conn = Connection::open(url.substr(0, url.rfind('/') + 1) + "no_such_database_here");
  EXPECT_THAT(conn, StatusIs(absl::StatusCode::kNotFound, HasSubstr("no_such_database_here")));
  EXPECT_FALSE(is_transient(conn.status()));
}

TEST(Connection, ReceivesNotificationsAndTimesOut) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection listener, Connection::open(db.url()));
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection sender, Connection::open(db.url()));
  ASSERT_THAT(listener.listen("pgflow test"), IsOk());

  auto nothing =
      listener.wait_notification(std::chrono::steady_clock::now() + std::chrono::milliseconds(50));
  ASSERT_THAT(nothing, IsOk());
  EXPECT_FALSE(nothing->has_value());

  ASSERT_THAT(sender.exec("select pg_notify('pgflow test', $1)", {"hello"}), IsOk());
  auto got =
      listener.wait_notification(std::chrono::steady_clock::now() + std::chrono::seconds(10));
  ASSERT_THAT(got, IsOk());
  ASSERT_TRUE(got->has_value());
  EXPECT_EQ((*got)->channel, "pgflow test");
  EXPECT_EQ((*got)->payload, "hello");
  EXPECT_EQ((*got)->sender_pid, sender.backend_pid());
}

TEST(Connection, StopRequestEndsAWaitEarly) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::empty());
  PGFLOW_ASSERT_OK_AND_ASSIGN(Connection listener, Connection::open(db.url()));
  ASSERT_THAT(listener.listen("never"), IsOk());
  std::stop_source stop;
  std::jthread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stop.request_stop();
  });
  // A one-hour deadline: only the stop request can end this wait.
  auto got = listener.wait_notification(std::chrono::steady_clock::now() + std::chrono::hours(1),
                                        stop.get_token());
  ASSERT_THAT(got, IsOk());
  EXPECT_FALSE(got->has_value());
  EXPECT_TRUE(stop.stop_requested());
}

}  // namespace
}  // namespace pgflow::pg
