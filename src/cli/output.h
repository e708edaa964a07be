// Human output of the `pgflow` command line: aligned tables, times, ages, progress bars,
// and the durations operators type (--since 2h, --older-than 14d).
#ifndef PGFLOW_CLI_OUTPUT_H_
#define PGFLOW_CLI_OUTPUT_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/time.h"
#include "nlohmann/json.hpp"

namespace pgflow::cli {

// Columns padded to their widest cell, two spaces apart; the last column is not padded. Cells
// are escaped like display_text() (they hold values from the database).
class Table {
 public:
  explicit Table(std::vector<std::string> headers, std::string indent = "");
  void add_row(std::vector<std::string> cells);
  bool empty() const { return rows_.size() == 1; }  // (no rows besides the headers)
  void print() const;                               // on stdout

 private:
  std::string indent_;
  std::vector<std::vector<std::string>> rows_;  // the headers first
};

// "12s", "3m 12s", "2h 5m", "4d 3h": the two largest units of a non-negative span.
std::string human_duration(absl::Duration d);

// `t` in UTC, RFC 3339 ("2026-12-01T14:16:38.123456+00:00"): timestamps in --json output.
std::string rfc3339(absl::Time t);

// A timestamp from the SQL core's JSON (null: "-"), shown as "2026-12-01 14:16:38Z".
std::string timestamp_text(const nlohmann::json& timestamp);

// The span between two JSON timestamps ("-" when either is null).
std::string span_text(const nlohmann::json& from, const nlohmann::json& to);

// "[######----] 6/10": done of total, `width` cells wide.
std::string progress_bar(long long done, long long total, int width = 20);

// "90s", "15m", "2h30m", "14d", "1w", "500ms": whole or decimal numbers, each with a unit
// (ms, s, m, h, d, w). nullopt for anything else, below a microsecond and beyond 100 years.
std::optional<absl::Duration> parse_duration(std::string_view text);

// The duration as a PostgreSQL interval literal, to its microsecond ("500 microseconds").
std::string to_interval(absl::Duration d);

// JSON value as display text: strings bare (control characters and bytes that are not UTF-8
// escaped, as in log lines: a value from the database cannot drive the operator's terminal),
// null as "-", numbers and the rest as JSON (json_text).
std::string display_text(const nlohmann::json& value);

// JSON value as compact JSON text; a string that is not UTF-8 (a SQL_ASCII database) has its
// bad bytes replaced instead of throwing.
std::string json_text(const nlohmann::json& value);

// True when file descriptor `fd` is a terminal (progress output goes only there).
bool is_terminal(int fd);

}  // namespace pgflow::cli

#endif  // PGFLOW_CLI_OUTPUT_H_
