// GoogleTest matchers for absl::Status and absl::StatusOr (Debian's Abseil has none).
//
//   EXPECT_THAT(pgflow::migrate(url), IsOk());
//   EXPECT_THAT(result, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("slug")));
#ifndef PGFLOW_TESTS_TESTING_STATUS_MATCHERS_H_
#define PGFLOW_TESTS_TESTING_STATUS_MATCHERS_H_

#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"

namespace pgflow::testing {

inline const absl::Status& to_status(const absl::Status& s) { return s; }
template <typename T>
const absl::Status& to_status(const absl::StatusOr<T>& s) {
  return s.status();
}

MATCHER(IsOk, "is OK") {
  const absl::Status& s = to_status(arg);
  if (!s.ok()) *result_listener << "status is " << s.ToString();
  return s.ok();
}

MATCHER_P2(StatusIs, code_matcher, message_matcher, "") {
  const absl::Status& s = to_status(arg);
  *result_listener << "status is " << s.ToString();
  return ::testing::Matches(code_matcher)(s.code()) &&
         ::testing::ExplainMatchResult(message_matcher, std::string(s.message()), result_listener);
}

// An OK StatusOr whose value matches `value_matcher`.
MATCHER_P(IsOkAndHolds, value_matcher, "") {
  if (!arg.ok()) {
    *result_listener << "status is " << arg.status().ToString();
    return false;
  }
  return ::testing::ExplainMatchResult(value_matcher, *arg, result_listener);
}

}  // namespace pgflow::testing

// Fails the test (not a skip) with the status when `expr` is not OK; else yields its value.
#define PGFLOW_ASSERT_OK_AND_ASSIGN(lhs, expr) \
  PGFLOW_ASSERT_OK_AND_ASSIGN_IMPL_(PGFLOW_TEST_CONCAT_(statusor_, __LINE__), lhs, expr)
#define PGFLOW_TEST_CONCAT_INNER_(a, b) a##b
#define PGFLOW_TEST_CONCAT_(a, b) PGFLOW_TEST_CONCAT_INNER_(a, b)
#define PGFLOW_ASSERT_OK_AND_ASSIGN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                      \
  ASSERT_TRUE(tmp.ok()) << tmp.status().ToString();       \
  lhs = std::move(tmp).value()

#endif  // PGFLOW_TESTS_TESTING_STATUS_MATCHERS_H_
