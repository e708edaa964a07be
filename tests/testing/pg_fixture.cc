#include "testing/pg_fixture.h"

#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <fstream>
#include <random>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "internal/status_macros.h"
#include "pg/connection.h"

namespace pgflow::testing {
namespace {

std::string unique_name() {
  static std::atomic<int> counter{0};
  std::random_device rd;
  return absl::StrCat("test_", getpid(), "_", counter++, "_", rd() % 100000);
}

std::string with_database(const std::string& url, const std::string& db) {
  return url.substr(0, url.rfind('/') + 1) + db;
}

absl::StatusOr<TestDatabase> create(const std::string& clause) {
  PGFLOW_ASSIGN_OR_RETURN(std::string admin, cluster_url());
  PGFLOW_ASSIGN_OR_RETURN(pg::Connection conn, pg::Connection::open(admin));
  std::string name = unique_name();
  // FILE_COPY copies the template's files instead of writing every page to the WAL: about
  // half the time of the default on a test cluster (fsync off; tests/README.md).
  PGFLOW_RETURN_IF_ERROR(conn.exec(absl::StrCat("create database ", pg::quote_identifier(name),
                                                clause, " strategy file_copy"))
                             .status());
  return TestDatabase::from_parts(admin, name, with_database(admin, name));
}

}  // namespace

namespace {

// The URL in `file`, written by the script that started the server.
absl::StatusOr<std::string> url_in(const std::string& file) {
  std::ifstream in(file);
  std::string url;
  if (!std::getline(in, url) || url.empty()) {
    return absl::FailedPreconditionError(absl::StrCat("no URL in ", file));
  }
  return url;
}

// The folder of the cluster ctest started.
absl::StatusOr<std::string> cluster_dir() {
  const char* dir = std::getenv("PGFLOW_TEST_CLUSTER");
  if (dir == nullptr || *dir == '\0') {
    return absl::FailedPreconditionError(
        "PGFLOW_TEST_CLUSTER is not set: run database tests through ctest, which starts the "
        "embedded cluster");
  }
  return std::string(dir);
}

}  // namespace

absl::StatusOr<std::string> cluster_url() {
  PGFLOW_ASSIGN_OR_RETURN(std::string dir, cluster_dir());
  return url_in(dir + "/url");
}

absl::StatusOr<std::string> pooled_url(const TestDatabase& db) {
  PGFLOW_ASSIGN_OR_RETURN(std::string dir, cluster_dir());
  // tests/CMakeLists.txt starts the pooler in the folder next to the cluster's.
  PGFLOW_ASSIGN_OR_RETURN(std::string pooler,
                          url_in(dir.substr(0, dir.rfind('/') + 1) + "pgpooler/url"));
  return with_database(pooler, db.name());
}

absl::StatusOr<TestDatabase> TestDatabase::from_template() {
  const char* tmpl = std::getenv("PGFLOW_TEST_TEMPLATE");
  return create(
      absl::StrCat(" template ", pg::quote_identifier(tmpl ? tmpl : "pgflow_test_template")));
}

absl::StatusOr<TestDatabase> TestDatabase::empty() { return create(" template template0"); }

TestDatabase TestDatabase::from_parts(std::string admin_url, std::string name, std::string url) {
  return TestDatabase(std::move(admin_url), std::move(name), std::move(url));
}

TestDatabase::TestDatabase(std::string admin_url, std::string name, std::string url)
    : admin_url_(std::move(admin_url)), name_(std::move(name)), url_(std::move(url)) {}

TestDatabase::TestDatabase(TestDatabase&& other) noexcept
    : admin_url_(std::move(other.admin_url_)),
      name_(std::move(other.name_)),
      url_(std::move(other.url_)) {
  other.name_.clear();
}

TestDatabase::~TestDatabase() {
  if (name_.empty()) return;
  auto conn = pg::Connection::open(admin_url_);
  if (conn.ok()) {
    (void)conn->exec(
        absl::StrCat("drop database if exists ", pg::quote_identifier(name_), " with (force)"));
  }
}

}  // namespace pgflow::testing
