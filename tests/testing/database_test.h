// A GoogleTest fixture for database tests: a fresh database cloned from the migrated
// template, and one connection to it.
#ifndef PGFLOW_TESTS_TESTING_DATABASE_TEST_H_
#define PGFLOW_TESTS_TESTING_DATABASE_TEST_H_

#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pg/connection.h"
#include "testing/pg_fixture.h"

namespace pgflow::testing {

class DatabaseTest : public ::testing::Test {
 protected:
  void SetUp() override;

  // The first column of the first row as text ("" when there is no row); a failing query
  // fails the test.
  std::string sql(const std::string& query, const std::vector<pg::Param>& params = {});

  std::optional<TestDatabase> db_;
  std::optional<pg::Connection> conn_;
};

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_DATABASE_TEST_H_
