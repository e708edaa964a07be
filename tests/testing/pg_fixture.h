// Database fixture for C++ integration tests: every test gets its own database on the
// embedded cluster started by ctest (fixture "pg"), either cloned from the migrated
// template or empty. Missing configuration is a test failure, never a
// skip: CI must not pass without PostgreSQL.
#ifndef PGFLOW_TESTS_TESTING_PG_FIXTURE_H_
#define PGFLOW_TESTS_TESTING_PG_FIXTURE_H_

#include <string>

#include "absl/status/statusor.h"

namespace pgflow::testing {

// The URL of the embedded cluster's maintenance database (postgres).
absl::StatusOr<std::string> cluster_url();

class TestDatabase;

// The URL of `db` through the PgBouncer (transaction pooling, pool of 8 server connections per
// database; scripts/pgpooler) that ctest starts in front of the cluster (part of fixture "pg").
absl::StatusOr<std::string> pooled_url(const TestDatabase& db);

// A database that lives as long as this object; dropped (with force) on destruction.
class TestDatabase {
 public:
  // A clone of the migrated template (all migrations, pgtap, dblink, pgflow_tests helpers).
  static absl::StatusOr<TestDatabase> from_template();
  // An empty database (nothing installed), for migration tests.
  static absl::StatusOr<TestDatabase> empty();

  // Adopts an existing database (internal use by the factories).
  static TestDatabase from_parts(std::string admin_url, std::string name, std::string url);

  TestDatabase(TestDatabase&&) noexcept;
  TestDatabase& operator=(TestDatabase&&) = delete;
  ~TestDatabase();

  const std::string& url() const { return url_; }
  const std::string& name() const { return name_; }

 private:
  TestDatabase(std::string admin_url, std::string name, std::string url);
  std::string admin_url_;
  std::string name_;
  std::string url_;
};

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_PG_FIXTURE_H_
