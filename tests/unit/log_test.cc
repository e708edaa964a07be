#include "pgflow/log.h"

#include <vector>

#include "gtest/gtest.h"

namespace pgflow {
namespace {

struct Captured {
  LogLevel level;
  std::string message;
  std::vector<LogField> fields;
};

TEST(Logger, FiltersByLevelAndCarriesFields) {
  std::vector<Captured> seen;
  Logger log(
      [&](const LogRecord& r) { seen.push_back({r.level, std::string(r.message), r.fields}); },
      LogLevel::kInfo, {{"worker_id", "w1"}});
  log.debug("hidden");
  log.info("started", {{"queue", "orders"}});
  log.with({{"run_id", "r1"}}).error("failed", {{"msg_id", "42"}});

  ASSERT_EQ(seen.size(), 2u);
  EXPECT_EQ(seen[0].message, "started");
  ASSERT_EQ(seen[0].fields.size(), 2u);
  EXPECT_EQ(seen[0].fields[0].key, "worker_id");
  EXPECT_EQ(seen[0].fields[1].value, "orders");
  EXPECT_EQ(seen[1].level, LogLevel::kError);
  ASSERT_EQ(seen[1].fields.size(), 3u);
  EXPECT_EQ(seen[1].fields[1].key, "run_id");
  EXPECT_EQ(seen[1].fields[2].value, "42");
}

TEST(Logger, DefaultLoggerDiscards) {
  Logger log;
  EXPECT_FALSE(log.enabled(LogLevel::kError));
  log.error("nobody hears this");
}

TEST(Logger, LevelNames) {
  EXPECT_EQ(to_string(LogLevel::kWarn), "warn");
  EXPECT_EQ(to_string(LogLevel::kDebug), "debug");
}

}  // namespace
}  // namespace pgflow
