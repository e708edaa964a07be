#include "pgflow/log.h"

#include <string>
#include <string_view>
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
      [&](const LogRecord& r) {
        seen.push_back({r.level, std::string(r.message), r.fields});
      },
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

// The line of a record, for the tests below.
std::string line_of(LogLevel level, std::string_view message, std::vector<LogField> fields) {
  return to_log_line(LogRecord{level, message, fields});
}

TEST(LogLine, PlainValuesStayBareAndOthersAreQuoted) {
  EXPECT_EQ(line_of(LogLevel::kInfo, "worker started", {{"queue", "orders"}, {"msg_id", "42"}}),
            "info worker started queue=orders msg_id=42");
  EXPECT_EQ(line_of(LogLevel::kWarn, "w", {{"error", "no route"}, {"empty", ""}}),
            R"(warn w error="no route" empty="")");
}

TEST(LogLine, AValueCannotStartALineOrPoseAsAField) {
  // A handler's error text that tries to end the record and forge another one.
  const std::string forged = "boom\nerror worker stopped run_id=\"x\" a\\b";
  const std::string line = line_of(LogLevel::kError, "handler failed", {{"error", forged}});
  EXPECT_EQ(line, R"(error handler failed error="boom\nerror worker stopped run_id=\"x\" a\\b")");
  EXPECT_EQ(line.find('\n'), std::string::npos);
  // '=' alone is enough to quote: key=value inside a value stays inside it.
  EXPECT_EQ(line_of(LogLevel::kInfo, "m", {{"slug", "a=b"}}), R"(info m slug="a=b")");
}

TEST(LogLine, ControlCharactersAreEscapedInValuesAndMessages) {
  EXPECT_EQ(line_of(LogLevel::kDebug, "two\nlines\r",
                    {{"v", std::string("a\tb\x01"
                                       "c\x7f")}}),
            R"(debug two\nlines\r v="a\tb\x01c\x7f")");
}

TEST(LogLine, BytesThatAreNotUtf8AreEscapedWellFormedUtf8IsKept) {
  // A lone lead byte, a truncated sequence, an overlong form; "é" and "€" stay as they are.
  EXPECT_EQ(
      line_of(LogLevel::kWarn, "m\xff", {{"v", "\xc3\xa9\xe2\x82\xac \xc3"}, {"w", "\xc0\xaf"}}),
      "warn m\\xff v=\"\xc3\xa9\xe2\x82\xac \\xc3\" w=\"\\xc0\\xaf\"");
  // A value that is only non-ASCII but well formed needs no quotes.
  EXPECT_EQ(line_of(LogLevel::kWarn, "m", {{"v", "\xc3\xa9"}}), "warn m v=\xc3\xa9");
}

TEST(LogLine, TheStderrSinkWritesOneLinePerRecord) {
  std::vector<LogField> fields = {{"error", "x\ny"}};
  ::testing::internal::CaptureStderr();
  stderr_log_sink()(LogRecord{LogLevel::kError, "failed", fields});
  EXPECT_EQ(::testing::internal::GetCapturedStderr(), R"(error failed error="x\ny")"
                                                      "\n");
}

TEST(Logger, LevelNames) {
  EXPECT_EQ(to_string(LogLevel::kWarn), "warn");
  EXPECT_EQ(to_string(LogLevel::kDebug), "debug");
}

}  // namespace
}  // namespace pgflow
