// The shared slug rules, driven by tests/data/slug_cases.tsv (the SQL tests of
// pgflow.is_valid_slug read the same file), against the DSL's constexpr validator, which is
// what Flow and .step check at compile time.
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "pgflow/detail/slug.h"

#ifndef PGFLOW_SLUG_CASES_TSV
#error "PGFLOW_SLUG_CASES_TSV must name tests/data/slug_cases.tsv"
#endif

namespace pgflow::detail {
namespace {

struct SlugCase {
  int line = 0;
  std::string slug;
  bool valid = false;
  std::string reason;
};

std::vector<std::string> split_tabs(const std::string& line) {
  std::vector<std::string> fields;
  std::string::size_type start = 0;
  while (true) {
    const auto tab = line.find('\t', start);
    fields.push_back(
        line.substr(start, tab == std::string::npos ? std::string::npos : tab - start));
    if (tab == std::string::npos) return fields;
    start = tab + 1;
  }
}

std::vector<SlugCase> load_cases() {
  std::ifstream in(PGFLOW_SLUG_CASES_TSV);
  EXPECT_TRUE(in.good()) << "cannot open " << PGFLOW_SLUG_CASES_TSV;
  std::vector<SlugCase> cases;
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (number == 1) {
      EXPECT_EQ(line, "slug\tvalid\treason");
      continue;
    }
    const std::vector<std::string> fields = split_tabs(line);
    EXPECT_EQ(fields.size(), 3u) << "line " << number << ": " << line;
    if (fields.size() != 3) continue;
    EXPECT_TRUE(fields[1] == "t" || fields[1] == "f") << "line " << number;
    cases.push_back({number, fields[0], fields[1] == "t", fields[2]});
  }
  return cases;
}

SlugProblem problem_named(const std::string& reason) {
  static const std::map<std::string, SlugProblem> kByName = {
      {"empty", SlugProblem::kEmpty},
      {"too_long", SlugProblem::kTooLong},
      {"invalid_character", SlugProblem::kInvalidCharacter},
      {"leading_digit", SlugProblem::kLeadingDigit},
      {"leading_underscore", SlugProblem::kLeadingUnderscore},
      {"trailing_underscore", SlugProblem::kTrailingUnderscore},
      {"double_underscore", SlugProblem::kDoubleUnderscore},
      {"reserved", SlugProblem::kReserved},
  };
  const std::string name = reason.substr(0, reason.find(':'));
  const auto it = kByName.find(name);
  EXPECT_NE(it, kByName.end()) << "reason of an invalid slug must start with a rule name: "
                               << reason;
  return it == kByName.end() ? SlugProblem::kNone : it->second;
}

TEST(FlowSlug, SharedTableAgreesWithTheValidator) {
  const std::vector<SlugCase> cases = load_cases();
  ASSERT_GE(cases.size(), 20u);
  for (const SlugCase& c : cases) {
    SCOPED_TRACE("slug_cases.tsv line " + std::to_string(c.line) + ": \"" + c.slug + "\" (" +
                 c.reason + ")");
    if (c.valid) {
      EXPECT_EQ(slug_error(c.slug), nullptr) << slug_error(c.slug);
      EXPECT_EQ(slug_problem(c.slug), SlugProblem::kNone);
    } else {
      EXPECT_NE(slug_error(c.slug), nullptr);
      EXPECT_EQ(slug_problem(c.slug), problem_named(c.reason));
    }
  }
}

TEST(FlowSlug, TableCoversEveryRule) {
  std::map<SlugProblem, int> seen;
  int valid = 0;
  for (const SlugCase& c : load_cases()) {
    if (c.valid) {
      ++valid;
    } else {
      ++seen[problem_named(c.reason)];
    }
  }
  EXPECT_GE(valid, 5);
  for (SlugProblem p :
       {SlugProblem::kEmpty, SlugProblem::kTooLong, SlugProblem::kInvalidCharacter,
        SlugProblem::kLeadingDigit, SlugProblem::kLeadingUnderscore,
        SlugProblem::kTrailingUnderscore, SlugProblem::kDoubleUnderscore, SlugProblem::kReserved}) {
    EXPECT_GT(seen[p], 0) << "no case for rule " << static_cast<int>(p);
  }
}

// The same validator in constant expressions, as the DSL uses it.
static_assert(slug_error("fetchUser") == nullptr);
static_assert(slug_problem("") == SlugProblem::kEmpty);
static_assert(slug_problem("9lives") == SlugProblem::kLeadingDigit);
static_assert(slug_problem("_x") == SlugProblem::kLeadingUnderscore);
static_assert(slug_problem("x_") == SlugProblem::kTrailingUnderscore);
static_assert(slug_problem("x__y") == SlugProblem::kDoubleUnderscore);
static_assert(slug_problem("run") == SlugProblem::kReserved);
static_assert(slug_problem("Run") == SlugProblem::kNone);
static_assert(slug_problem("a-b") == SlugProblem::kInvalidCharacter);
static_assert(flow_slug_error("abcdefghijabcdefghijabcdefghijabcdefghijabcdefg") == nullptr);  // 47
static_assert(flow_slug_error("abcdefghijabcdefghijabcdefghijabcdefghijabcdefgh") !=
              nullptr);  // 48
static_assert(equal_ignoring_case("fetchUser", "FETCHUSER"));
static_assert(!equal_ignoring_case("fetch", "fetch2"));

TEST(FlowSlug, FlowSlugLengthLimitIsFlowOnly) {
  const std::string slug48(48, 'a');
  EXPECT_EQ(slug_error(slug48), nullptr);
  EXPECT_NE(flow_slug_error(slug48), nullptr);
  EXPECT_EQ(flow_slug_error(std::string(47, 'a')), nullptr);
}

}  // namespace
}  // namespace pgflow::detail
