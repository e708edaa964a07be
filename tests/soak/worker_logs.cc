#include "worker_logs.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"

namespace pgflow::soak {

namespace {

// `key=...`: where a record's fields begin.
bool is_field(const std::string& word) {
  const auto eq = word.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  return std::all_of(word.begin(), word.begin() + static_cast<std::ptrdiff_t>(eq),
                     [](char c) { return (c >= 'a' && c <= 'z') || c == '_'; });
}

}  // namespace

LogDigest digest_worker_logs(const std::string& dir) {
  LogDigest digest;
  std::map<std::string, std::int64_t> counts;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (!name.starts_with("worker-") || !name.ends_with(".log")) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      // "HH:MM:SS.mmm pid=N level message key=value ..." (worker_main.cc)
      std::vector<std::string> words = absl::StrSplit(line, ' ', absl::SkipEmpty());
      if (words.size() < 3 || !words[1].starts_with("pid=")) {
        ++digest.other;
        ++counts[absl::StrCat("other ", line.substr(0, 120))];
        continue;
      }
      const std::string& level = words[2];
      if (level == "warn") {
        ++digest.warnings;
      } else if (level == "error") {
        ++digest.errors;
      } else {
        continue;
      }
      std::vector<std::string> message;
      for (size_t i = 3; i < words.size() && !is_field(words[i]); ++i) message.push_back(words[i]);
      ++counts[absl::StrCat(level, " ", absl::StrJoin(message, " "))];
    }
  }
  digest.by_message.assign(counts.begin(), counts.end());
  std::stable_sort(digest.by_message.begin(), digest.by_message.end(),
                   [](const auto& a, const auto& b) { return a.second > b.second; });
  return digest;
}

}  // namespace pgflow::soak
