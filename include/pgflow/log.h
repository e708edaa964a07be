// File: pgflow/log.h
//
// Structured logging through a caller-supplied sink. pgflow never logs credentials, message
// bodies, inputs or outputs: records carry a short message plus key/value fields such as
// ids, slugs and durations.
//
// Example:
//
//   pgflow::Logger log(pgflow::stderr_log_sink(), pgflow::LogLevel::kDebug);
//   log.info("worker started", {{"queue", "orders"}, {"worker_id", id}});
#ifndef PGFLOW_LOG_H_
#define PGFLOW_LOG_H_

#include <functional>
#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace pgflow {

// Severity, from most to least important.
enum class LogLevel { kError = 0, kWarn = 1, kInfo = 2, kDebug = 3 };

// "error", "warn", "info" or "debug".
std::string_view to_string(LogLevel level);

// One structured field of a log record.
struct LogField {
  std::string key;
  std::string value;
};

// What a sink receives. The views are valid only during the sink call.
struct LogRecord {
  LogLevel level;
  std::string_view message;
  const std::vector<LogField>& fields;
};

// Receives records at or above the logger's level. Called from pgflow's threads, possibly
// concurrently: a sink must be thread-safe and should not block for long.
using LogSink = std::function<void(const LogRecord&)>;

// A thread-safe sink that writes one to_log_line(record) line per record to stderr.
LogSink stderr_log_sink();

// `level message key=value ...` on one line, for sinks that write text. A value is quoted when
// it is empty or holds a space, '"', '=', '\\', a control character or a byte that is not
// well-formed UTF-8; inside the quotes '"', '\\', control characters and such bytes are escaped
// (\", \\, \n, \r, \t, \xHH). Control characters and such bytes in the message are escaped the
// same way. So a slug or a handler's error text can never start a new line, pose as another
// field or make the line invalid UTF-8.
std::string to_log_line(const LogRecord& record);

// A cheap, copyable handle over a sink, a minimum level and fields added to every record.
// A default-constructed Logger discards everything.
class Logger {
 public:
  Logger() = default;
  Logger(LogSink sink, LogLevel min_level, std::vector<LogField> fields = {});

  // True when records at `level` reach the sink (use it to skip building costly fields).
  bool enabled(LogLevel level) const;

  void log(LogLevel level, std::string_view message,
           std::initializer_list<LogField> fields = {}) const;
  void error(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kError, message, fields);
  }
  void warn(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kWarn, message, fields);
  }
  void info(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kInfo, message, fields);
  }
  void debug(std::string_view message, std::initializer_list<LogField> fields = {}) const {
    log(LogLevel::kDebug, message, fields);
  }

  // A logger that adds `fields` to every record, after this logger's own fields.
  Logger with(std::initializer_list<LogField> fields) const;

 private:
  LogSink sink_;
  LogLevel min_level_ = LogLevel::kInfo;
  std::vector<LogField> fields_;
};

}  // namespace pgflow

#endif  // PGFLOW_LOG_H_
