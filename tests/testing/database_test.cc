#include "testing/database_test.h"

namespace pgflow::testing {

void DatabaseTest::SetUp() {
  absl::StatusOr<TestDatabase> db = TestDatabase::from_template();
  ASSERT_TRUE(db.ok()) << db.status();
  db_.emplace(std::move(*db));
  absl::StatusOr<pg::Connection> conn = pg::Connection::open(db_->url());
  ASSERT_TRUE(conn.ok()) << conn.status();
  conn_.emplace(std::move(*conn));
}

std::string DatabaseTest::sql(const std::string& query, const std::vector<pg::Param>& params) {
  absl::StatusOr<pg::Result> r = conn_->exec(query, params);
  EXPECT_TRUE(r.ok()) << r.status() << " in: " << query;
  if (!r.ok() || r->rows() == 0) return "";
  return std::string(r->scalar());
}

}  // namespace pgflow::testing
