#include "pgflow/log.h"

#include <cstdio>
#include <mutex>
#include <utility>

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

LogSink stderr_log_sink() {
  static std::mutex mu;  // one line at a time across threads
  return [](const LogRecord& record) {
    std::string line;
    line.append(to_string(record.level)).append(" ").append(record.message);
    for (const LogField& field : record.fields) {
      line.append(" ").append(field.key).append("=");
      const bool quote = field.value.empty() || field.value.find(' ') != std::string::npos;
      if (quote) line.append("\"");
      line.append(field.value);
      if (quote) line.append("\"");
    }
    line.append("\n");
    std::lock_guard<std::mutex> lock(mu);
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
