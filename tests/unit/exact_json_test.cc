// Typed conversions never change a value (pgflow/detail/exact_json.h): every integral and
// floating type, from JSON (what the database hands a handler) and back (a handler's output
// read by the next step), scalars and fields of structs, vectors and maps; and the typed
// handlers turn a refused conversion into a permanent failure naming the step, the field and
// the JSON type.
#include "pgflow/detail/exact_json.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <map>
#include <set>
#include <string>
#include <type_traits>
#include <unordered_set>
#include <vector>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "pgflow/flow.h"
#include "pgflow/status.h"
#include "testing/status_matchers.h"

namespace exact_test {
struct Order {
  std::string id;
  int qty = 0;
  double price = 0;
  bool gift = false;
  std::vector<std::int16_t> counts;
  std::map<std::string, std::uint8_t> bins;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, qty, price, gift, counts, bins)
}  // namespace exact_test

namespace pgflow {
namespace {

using detail::ConversionError;
using detail::exact_get;
using ::pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::Not;

nlohmann::json parse(const char* text) { return nlohmann::json::parse(text); }

// What a JSON text (as PostgreSQL prints jsonb) does when read as T: converts to `expected`,
// or fails with a message containing `error`.
template <typename T>
struct Case {
  const char* json;
  const char* error;  // nullptr: converts
  T expected = {};
};

template <typename T>
void check(const std::vector<Case<T>>& cases) {
  for (const Case<T>& c : cases) {
    SCOPED_TRACE(::testing::Message() << detail::number_name<T>() << " from " << c.json);
    if (c.error == nullptr) {
      T value{};
      ASSERT_NO_THROW(value = exact_get<T>(parse(c.json)));
      EXPECT_EQ(value, c.expected);
    } else {
      try {
        exact_get<T>(parse(c.json));
        ADD_FAILURE() << "converted, but should fail with: " << c.error;
      } catch (const std::exception& e) {
        EXPECT_THAT(e.what(), HasSubstr(c.error));
      }
    }
  }
}

constexpr const char* kFraction = "a JSON number with a fraction does not convert exactly to ";
constexpr const char* kRange = "a JSON number is out of the range of ";
constexpr const char* kBoolean = "a JSON boolean does not convert to ";

TEST(ExactJson, SignedIntegersTakeOnlyIntegralValuesInRange) {
  check<std::int8_t>({{"127", nullptr, 127},
                      {"-128", nullptr, -128},
                      {"128", kRange},
                      {"-129", kRange},
                      {"2.0", nullptr, 2},
                      {"2.5", kFraction},
                      {"true", kBoolean}});
  check<std::int16_t>({{"32767", nullptr, 32767}, {"32768", kRange}, {"-32769", kRange}});
  check<std::int32_t>({{"2147483647", nullptr, 2147483647},
                       {"-2147483648", nullptr, std::numeric_limits<std::int32_t>::min()},
                       {"30000000000", kRange},  // 3e10, as PostgreSQL prints it
                       {"2147483648", kRange},
                       {"-0.5", kFraction},
                       {"1e9", nullptr, 1000000000}});
  check<std::int64_t>(
      {{"9223372036854775807", nullptr, std::numeric_limits<std::int64_t>::max()},
       {"-9223372036854775808", nullptr, std::numeric_limits<std::int64_t>::min()},
       {"9223372036854775808", kRange},          // read as unsigned
       {"-9223372036854775809", "beyond 2^53"},  // read as floating: rounded to -2^63
       {"9007199254740995.0", "beyond 2^53"},    // rounded when read
       {"9007199254740993.0", "beyond 2^53"},    // reads as exactly 2^53
       {"9007199254740992.0", "beyond 2^53"},    // the same double: cannot be told apart
       {"9007199254740991.0", nullptr, 9007199254740991},
       {"100000000000000000000", kRange},
       {"0.1", kFraction}});
}

TEST(ExactJson, UnsignedIntegersRefuseNegativeNumbers) {
  check<std::uint8_t>({{"255", nullptr, 255}, {"256", kRange}, {"-1", kRange}});
  check<std::uint16_t>({{"65535", nullptr, 65535}, {"65536", kRange}, {"-1", kRange}});
  check<unsigned>({{"4294967295", nullptr, 4294967295u},
                   {"-1", kRange},
                   {"4294967296", kRange},
                   {"1.5", kFraction}});
  check<std::uint64_t>(
      {{"18446744073709551615", nullptr, std::numeric_limits<std::uint64_t>::max()},
       {"18446744073709551616", kRange},
       {"-1", kRange},
       {"0", nullptr, 0}});
}

TEST(ExactJson, FloatingTypesTakeFiniteNumbersInRange) {
  check<double>({{"2.5", nullptr, 2.5},
                 {"-1e308", nullptr, -1e308},
                 {"9007199254740993", nullptr, 9007199254740992.0},  // the nearest double
                 {"18446744073709551615", nullptr, 18446744073709551615.0},
                 {"false", kBoolean}});
  check<float>({{"0.5", nullptr, 0.5f},
                {"0.1", nullptr, 0.1f},  // rounded to the nearest float, as any decimal
                {"1e38", nullptr, 1e38f},
                {"1e39", kRange},
                {"-1e300", kRange},
                {"18446744073709551615", nullptr, 18446744073709551615.0f}});
}

TEST(ExactJson, BooleansConvertToBoolOnlyAndNumbersNeverDo) {
  EXPECT_TRUE(exact_get<bool>(parse("true")));
  EXPECT_THROW(exact_get<bool>(parse("1")), nlohmann::json::type_error);
  EXPECT_THROW(exact_get<int>(parse("true")), ConversionError);
  EXPECT_THROW(exact_get<int>(parse("\"7\"")), nlohmann::json::type_error) << "no string to number";
}

TEST(ExactJson, NonFiniteNumbersAreRefused) {
  nlohmann::json inf = std::numeric_limits<double>::infinity();
  nlohmann::json nan = std::numeric_limits<double>::quiet_NaN();
  for (const nlohmann::json& j : {inf, nan}) {
    EXPECT_THROW(exact_get<double>(j), ConversionError);
    EXPECT_THROW(exact_get<int>(j), ConversionError);
    EXPECT_THROW(exact_get<std::vector<double>>(nlohmann::json::array({j})), ConversionError);
  }
}

// A handler's output is written by nlohmann (to_json) and read back by the next step: every
// value of every arithmetic type survives exactly, extremes included.
template <typename T>
void round_trips(std::initializer_list<T> values) {
  for (T v : values) {
    SCOPED_TRACE(::testing::Message() << detail::number_name<T>() << " " << +v);
    const nlohmann::json stored = nlohmann::json::parse(nlohmann::json(v).dump());
    T back{};
    ASSERT_NO_THROW(back = exact_get<T>(stored));
    if constexpr (std::is_floating_point_v<T>) {
      EXPECT_EQ(std::signbit(back), std::signbit(v));
    }
    EXPECT_EQ(back, v);
  }
}

TEST(ExactJson, EveryOutputOfEveryNumberTypeReadsBackUnchanged) {
  round_trips<std::int8_t>({-128, -1, 0, 127});
  round_trips<std::uint8_t>({0, 255});
  round_trips<std::int16_t>({-32768, 32767});
  round_trips<std::uint16_t>({65535});
  round_trips<std::int32_t>(
      {std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()});
  round_trips<std::uint32_t>({std::numeric_limits<std::uint32_t>::max()});
  round_trips<std::int64_t>(
      {std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max()});
  round_trips<std::uint64_t>({std::numeric_limits<std::uint64_t>::max()});
  round_trips<float>({0.1f, -0.0f, std::numeric_limits<float>::max(),
                      std::numeric_limits<float>::lowest(),
                      std::numeric_limits<float>::denorm_min()});
  round_trips<double>({0.1, -0.0, std::numeric_limits<double>::max(),
                       std::numeric_limits<double>::lowest(),
                       std::numeric_limits<double>::denorm_min(), 9007199254740993.0});
}

// Fields of structs and elements of containers are converted by nlohmann's own (lenient)
// from_json: the round trip catches what changed, and names where.
TEST(ExactJson, AFieldThatWouldChangeIsNamedByItsJsonPointer) {
  const auto fails_at = [](const char* json, const char* where) {
    SCOPED_TRACE(json);
    try {
      exact_get<exact_test::Order>(parse(json));
      ADD_FAILURE() << "converted";
    } catch (const ConversionError& e) {
      EXPECT_THAT(e.what(), HasSubstr(where));
    }
  };
  constexpr const char* kBase =
      R"("id": "o-1", "price": 9.5, "gift": false, "counts": [1], "bins": {})";
  fails_at((std::string("{") + kBase + R"(, "qty": 2.5})").c_str(),
           "at /qty: a JSON number with a fraction does not convert exactly to the field's integer "
           "type");
  fails_at(R"({"id": "o", "qty": 1, "price": 1, "gift": false, "counts": [1, 40000], "bins": {}})",
           "at /counts/1: a JSON number is out of the field's range");
  fails_at(
      R"({"id": "o", "qty": 1, "price": 1, "gift": false, "counts": [], "bins": {"a/b~": -1}})",
      "at /bins/a~1b~0: a JSON number is out of the field's range");
  fails_at(R"({"id": "o", "qty": true, "price": 1, "gift": false, "counts": [], "bins": {}})",
           "at /qty: a JSON boolean does not convert to a number");
}

// A map's keys are input data (emails, tokens): the pointer in the message shows at most 96
// bytes of the path, escaped, so a huge or hostile key is neither copied whole nor able to
// drive a terminal.
TEST(ExactJson, APointerThroughALongKeyIsEscapedAndBounded) {
  const std::string key = "\x1b[2J" + std::string(10000, 'k');
  nlohmann::json input = {{key, 1.5}};
  try {
    exact_get<std::map<std::string, int>>(input);
    ADD_FAILURE() << "converted";
  } catch (const ConversionError& e) {
    const std::string message = e.what();
    EXPECT_THAT(message, ::testing::StartsWith("at /\\x1b[2Jkkk"));
    EXPECT_THAT(message, HasSubstr("kkk...: a JSON number with a fraction"));
    EXPECT_LT(message.size(), 300u);
    EXPECT_EQ(message.find('\x1b'), std::string::npos);
  }
}

TEST(ExactJson, AStructThatFitsConvertsWithItsValues) {
  const exact_test::Order o = exact_get<exact_test::Order>(parse(
      R"({"id": "o-1", "qty": 3.0, "price": 0.1, "gift": true, "counts": [-32768, 32767], "bins": {"x": 255}})"));
  EXPECT_EQ(o.qty, 3);
  EXPECT_EQ(o.price, 0.1);
  EXPECT_TRUE(o.gift);
  EXPECT_EQ(o.counts, (std::vector<std::int16_t>{-32768, 32767}));
  EXPECT_EQ(o.bins.at("x"), 255);
}

TEST(ExactJson, AnIntegerListThatWouldTruncateIsRefused) {
  EXPECT_THROW(exact_get<std::vector<int>>(parse("[1, 2, 3.5]")), ConversionError);
  EXPECT_EQ(exact_get<std::vector<int>>(parse("[1, 2, 3]")), (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(exact_get<std::vector<std::string>>(parse(R"(["a"])")), std::vector<std::string>{"a"});
}

TEST(ExactJson, SetsAndNumberKeyedMapsMayReorderAndMergeButNotChange) {
  EXPECT_EQ(exact_get<std::set<int>>(parse("[3, 1, 3, 2.0]")), (std::set<int>{1, 2, 3}));
  EXPECT_EQ(exact_get<std::multiset<int>>(parse("[3, 1, 3]")), (std::multiset<int>{1, 3, 3}));
  EXPECT_EQ(exact_get<std::unordered_set<int>>(parse("[5, 4, 3, 2, 1]")),
            (std::unordered_set<int>{1, 2, 3, 4, 5}));
  EXPECT_EQ(exact_get<std::set<float>>(parse("[0.2, 0.1]")), (std::set<float>{0.1f, 0.2f}));
  EXPECT_EQ((exact_get<std::map<int, std::string>>(parse(R"([[3, "c"], [1, "a"]])"))),
            (std::map<int, std::string>{{1, "a"}, {3, "c"}}));
  EXPECT_EQ((exact_get<std::map<std::string, std::set<int>>>(parse(R"({"k": [2, 1]})"))),
            (std::map<std::string, std::set<int>>{{"k", {1, 2}}}));

  const auto fails_at = [](const char* json, auto type, const char* message) {
    using T = typename decltype(type)::type;
    SCOPED_TRACE(json);
    try {
      (void)exact_get<T>(parse(json));
      ADD_FAILURE() << "converted";
    } catch (const ConversionError& e) {
      EXPECT_STREQ(e.what(), message);
    }
  };
  fails_at("[1, 1.5]", std::type_identity<std::set<int>>{},
           "at /1: a JSON number with a fraction does not convert exactly to the field's integer "
           "type");
  fails_at("[2.5, 1]", std::type_identity<std::set<int>>{},
           "at /0: a JSON number with a fraction does not convert exactly to the field's integer "
           "type");
  fails_at("[3, 300]", std::type_identity<std::set<std::uint8_t>>{},
           "at /1: a JSON number is out of the field's range");
  fails_at(R"([[3, "c"], [1.5, "a"]])", std::type_identity<std::map<int, std::string>>{},
           "at /1/0: a JSON number with a fraction does not convert exactly to the field's "
           "integer type");
  fails_at(R"({"k": [1, 2, 2.5]})", std::type_identity<std::map<std::string, std::set<int>>>{},
           "at /k/2: a JSON number with a fraction does not convert exactly to the field's integer "
           "type");
}

// ---- through a typed handler: the worker's view --------------------------------------------

inline const auto kIntFlow = Flow<"exactInt", int>().step<"double">([](int x) { return 2 * x; });
inline const auto kOrderFlow =
    Flow<"exactOrder", exact_test::Order>()
        .step<"total">([](const exact_test::Order& o) { return o.qty; })
        .step<"rounded">(pgflow::after<"total">, [](int total) { return total; });

absl::StatusOr<nlohmann::json> call(const FlowDefinition& flow, std::string_view step,
                                    const nlohmann::json& input, const nlohmann::json& run_input) {
  Context ctx({.flow_slug = flow.slug, .step_slug = std::string(step), .flow_input = run_input});
  return flow.find(step)->handler(input, ctx);
}

TEST(ExactJson, AFractionalRunInputFailsTheStepPermanentlyNamingTheJsonType) {
  const absl::StatusOr<nlohmann::json> out =
      call(kIntFlow.definition(), "double", nlohmann::json::object(), 2.5);
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(HasSubstr("flow \"exactInt\", step \"double\""),
                                  HasSubstr("cannot convert the flow input"),
                                  HasSubstr("a JSON number with a fraction"), HasSubstr("int"),
                                  Not(HasSubstr("2.5")))));
  EXPECT_TRUE(is_permanent(out.status())) << "the same input fails every attempt";
}

TEST(ExactJson, ADependencyOutputThatWouldTruncateNamesTheDependency) {
  const absl::StatusOr<nlohmann::json> out = call(
      kOrderFlow.definition(), "rounded", nlohmann::json{{"total", 7.5}}, nlohmann::json::object());
  EXPECT_THAT(out, StatusIs(absl::StatusCode::kInvalidArgument,
                            AllOf(HasSubstr("step \"rounded\""), HasSubstr("dependency \"total\""),
                                  HasSubstr("with a fraction"))));
  EXPECT_TRUE(is_permanent(out.status()));
}

TEST(ExactJson, AStructInputFieldIsNamed) {
  const absl::StatusOr<nlohmann::json> out = call(
      kOrderFlow.definition(), "total", nlohmann::json::object(),
      parse(
          R"({"id": "o", "qty": 30000000000, "price": 1, "gift": false, "counts": [], "bins": {}})"));
  EXPECT_THAT(out,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("step \"total\""),
                             HasSubstr("at /qty: a JSON number is out of the field's range"))));
  EXPECT_TRUE(is_permanent(out.status()));
}

TEST(ExactJson, PermanentMarksAStatusWithoutChangingIt) {
  const absl::Status s = permanent(absl::NotFoundError("no such customer"));
  EXPECT_TRUE(is_permanent(s));
  EXPECT_EQ(s.code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(s.message(), "no such customer");
  EXPECT_FALSE(is_permanent(absl::NotFoundError("no such customer")));
  EXPECT_TRUE(permanent(absl::OkStatus()).ok());
  EXPECT_FALSE(is_permanent(permanent(absl::OkStatus())));
}

}  // namespace
}  // namespace pgflow
