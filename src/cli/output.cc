#include "cli/output.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "internal/text_checks.h"
#include "internal/timestamps.h"

namespace pgflow::cli {

Table::Table(std::vector<std::string> headers, std::string indent) : indent_(std::move(indent)) {
  rows_.push_back(std::move(headers));
}

void Table::add_row(std::vector<std::string> cells) {
  cells.resize(rows_.front().size());
  for (std::string& cell : cells) cell = internal::escaped(cell);
  rows_.push_back(std::move(cells));
}

void Table::print() const {
  std::vector<size_t> widths(rows_.front().size(), 0);
  for (const auto& row : rows_) {
    for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
  }
  for (const auto& row : rows_) {
    std::string line = indent_;
    for (size_t i = 0; i < row.size(); ++i) {
      line += row[i];
      if (i + 1 < row.size()) line.append(widths[i] - row[i].size() + 2, ' ');
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    std::printf("%s\n", line.c_str());
  }
}

std::string human_duration(absl::Duration d) {
  if (d < absl::Seconds(1))
    return absl::StrCat(absl::ToInt64Milliseconds(std::max(d, absl::ZeroDuration())), "ms");
  if (d < absl::Seconds(10)) return absl::StrCat(absl::ToInt64Milliseconds(d) / 100 / 10.0, "s");
  const int64_t s = absl::ToInt64Seconds(d);
  struct Unit {
    int64_t seconds;
    const char* name;
  };
  constexpr Unit kUnits[] = {{86400, "d"}, {3600, "h"}, {60, "m"}, {1, "s"}};
  for (size_t i = 0; i < std::size(kUnits); ++i) {
    if (s < kUnits[i].seconds) continue;
    std::string out = absl::StrCat(s / kUnits[i].seconds, kUnits[i].name);
    if (i + 1 < std::size(kUnits) && s % kUnits[i].seconds >= kUnits[i + 1].seconds) {
      absl::StrAppend(&out, " ", s % kUnits[i].seconds / kUnits[i + 1].seconds, kUnits[i + 1].name);
    }
    return out;
  }
  return "0s";
}

namespace {
std::optional<absl::Time> time_of(const nlohmann::json& timestamp) {
  if (!timestamp.is_string()) return std::nullopt;
  absl::StatusOr<absl::Time> t = internal::parse_timestamp(timestamp.get<std::string>());
  return t.ok() ? std::optional<absl::Time>(*t) : std::nullopt;
}
}  // namespace

std::string rfc3339(absl::Time t) {
  return absl::FormatTime(absl::RFC3339_full, t, absl::UTCTimeZone());
}

std::string timestamp_text(const nlohmann::json& timestamp) {
  std::optional<absl::Time> t = time_of(timestamp);
  if (!t) return display_text(timestamp);
  return absl::FormatTime("%Y-%m-%d %H:%M:%SZ", *t, absl::UTCTimeZone());
}

std::string span_text(const nlohmann::json& from, const nlohmann::json& to) {
  std::optional<absl::Time> a = time_of(from), b = time_of(to);
  return a && b ? human_duration(*b - *a) : "-";
}

std::string progress_bar(long long done, long long total, int width) {
  const long long filled =
      total > 0 ? std::clamp(done * width / total, 0LL, static_cast<long long>(width)) : 0;
  return absl::StrCat("[", std::string(filled, '#'), std::string(width - filled, '-'), "] ", done,
                      "/", total);
}

std::optional<absl::Duration> parse_duration(std::string_view text) {
  struct Unit {
    std::string_view name;
    absl::Duration size;
  };
  // "ms" before "m": the longest unit name that matches wins.
  const Unit kUnits[] = {{"ms", absl::Milliseconds(1)}, {"s", absl::Seconds(1)},
                         {"m", absl::Minutes(1)},       {"h", absl::Hours(1)},
                         {"d", absl::Hours(24)},        {"w", absl::Hours(24 * 7)}};
  absl::Duration total;
  if (text.empty()) return std::nullopt;
  while (!text.empty()) {
    size_t digits = 0;
    while (digits < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[digits])) || text[digits] == '.')) {
      ++digits;
    }
    double number = 0;
    if (digits == 0 || !absl::SimpleAtod(std::string(text.substr(0, digits)), &number))
      return std::nullopt;
    text.remove_prefix(digits);
    const Unit* unit = nullptr;
    for (const Unit& u : kUnits) {
      if (text.substr(0, u.name.size()) == u.name &&
          (unit == nullptr || u.name.size() > unit->name.size()))
        unit = &u;
    }
    if (unit == nullptr) return std::nullopt;
    text.remove_prefix(unit->name.size());
    total += number * unit->size;
  }
  // Below a microsecond, PostgreSQL's resolution, a duration would mean nothing; beyond 100
  // years, "that long ago" can leave the range of a timestamp (4713 BC).
  if (total < absl::Microseconds(1) || total > absl::Hours(24 * 36525)) return std::nullopt;
  return total;
}

std::string to_interval(absl::Duration d) {
  return absl::StrCat(absl::ToInt64Microseconds(d), " microseconds");
}

std::string display_text(const nlohmann::json& value) {
  if (value.is_null()) return "-";
  if (value.is_string()) return internal::escaped(value.get<std::string>());
  return json_text(value);
}

std::string json_text(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

bool is_terminal(int fd) { return isatty(fd) == 1; }

}  // namespace pgflow::cli
