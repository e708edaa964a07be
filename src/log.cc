#include "pgflow/log.h"

#include <algorithm>
#include <cstdio>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "internal/text_checks.h"

namespace pgflow {

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "unknown";
}

namespace {

bool needs_quotes(std::string_view value) {
  return value.empty() ||
         std::any_of(value.begin(), value.end(),
                     [](char c) {
                       return c == ' ' || c == '"' || c == '=' || c == '\\' ||
                              internal::is_control(c);
                     }) ||
         internal::invalid_utf8_at(value) != std::string_view::npos;
}

}  // namespace

std::string to_log_line(const LogRecord& record) {
  std::string line(to_string(record.level));
  line.push_back(' ');
  internal::append_escaped(line, record.message, /*quoted=*/false);
  for (const LogField& field : record.fields) {
    line.append(" ").append(field.key).append("=");
    if (needs_quotes(field.value)) {
      line.push_back('"');
      internal::append_escaped(line, field.value, /*quoted=*/true);
      line.push_back('"');
    } else {
      line.append(field.value);
    }
  }
  return line;
}

LogSink stderr_log_sink() {
  ABSL_CONST_INIT static absl::Mutex mu(absl::kConstInit);  // stderr: one line at a time
  return [](const LogRecord& record) {
    std::string line = to_log_line(record);
    line.push_back('\n');
    absl::MutexLock lock(&mu);
    std::fwrite(line.data(), 1, line.size(), stderr);
  };
}

Logger::Logger(LogSink sink, LogLevel min_level, std::vector<LogField> fields)
    : sink_(std::move(sink)), min_level_(min_level), fields_(std::move(fields)) {}

bool Logger::enabled(LogLevel level) const {
  return sink_ && static_cast<int>(level) <= static_cast<int>(min_level_);
}

void Logger::log(LogLevel level, std::string_view message,
                 std::initializer_list<LogField> fields) const {
  if (!enabled(level)) return;
  std::vector<LogField> all = fields_;
  all.insert(all.end(), fields.begin(), fields.end());
  sink_(LogRecord{level, message, all});
}

Logger Logger::with(std::initializer_list<LogField> fields) const {
  Logger copy = *this;
  copy.fields_.insert(copy.fields_.end(), fields.begin(), fields.end());
  return copy;
}

}  // namespace pgflow
