// A 30-step flow (roots, chains, fan-ins, maps over arrays, conditional and skippable steps),
// shared by the DSL's compile-time-cost test (tests/unit/flow_large_test.cc) and the shape_of
// micro-benchmark (bench/micro_bench.cc).
#ifndef PGFLOW_TESTS_TESTING_LARGE_FLOW_H_
#define PGFLOW_TESTS_TESTING_LARGE_FLOW_H_

#include <optional>
#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "pgflow/flow.h"

namespace pgflow::testing::large {

struct Order {
  std::string id;
  std::vector<int> lines;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, lines)

// s01..s30: roots, chains, fan-ins, maps over arrays, conditional and skippable steps.
inline const auto flow =
    Flow<"largeFlow", Order>({.max_attempts = 2})
        .step<"s01">([](const Order& o) { return static_cast<int>(o.lines.size()); })
        .array<"s02">([](const Order& o) { return o.lines; })
        .step<"s03">(after<"s02", "s01">,
                     [](const std::vector<int>& xs, int count) {
                       return static_cast<int>(xs.size()) + count;
                     })
        .step<"s04">(after<"s03">, when({{"s03", 4}}), when_unmet_skip, [](int x) { return x * 2; })
        .step<"s05">(after<"s04", "s03">,
                     [](std::optional<int> a, int b) { return a.value_or(0) + b; })
        .step<"s06">(after<"s05">, when_exhausted_skip_cascade, {.max_attempts = 1},
                     [](int x) { return x; })
        .map<"s07">(over<"s02">, [](int line) { return line * 7; })
        .array<"s08">(after<"s07">, [](const std::vector<int>& xs) { return xs; })
        .map<"s09">(over<"s08">, {.timeout = 9}, [](int x, Context&) { return x + 1; })
        .step<"s10">(after<"s09", "s01">,
                     [](const std::vector<int>& xs, int count) {
                       return static_cast<int>(xs.size()) + count;
                     })
        .step<"s11">(after<"s10">, when({{"s10", 11}}), when_unmet_skip,
                     [](int x) { return x * 2; })
        .step<"s12">(after<"s11", "s10">,
                     [](std::optional<int> a, int b) { return a.value_or(0) + b; })
        .step<"s13">(after<"s12">, when_exhausted_skip_cascade, {.max_attempts = 1},
                     [](int x) { return x; })
        .map<"s14">(over<"s02">, [](int line) { return line * 14; })
        .array<"s15">(after<"s14">, [](const std::vector<int>& xs) { return xs; })
        .map<"s16">(over<"s15">, {.timeout = 16}, [](int x, Context&) { return x + 1; })
        .step<"s17">(after<"s16", "s01">,
                     [](const std::vector<int>& xs, int count) {
                       return static_cast<int>(xs.size()) + count;
                     })
        .step<"s18">(after<"s17">, when({{"s17", 18}}), when_unmet_skip,
                     [](int x) { return x * 2; })
        .step<"s19">(after<"s18", "s17">,
                     [](std::optional<int> a, int b) { return a.value_or(0) + b; })
        .step<"s20">(after<"s19">, when_exhausted_skip_cascade, {.max_attempts = 1},
                     [](int x) { return x; })
        .map<"s21">(over<"s02">, [](int line) { return line * 21; })
        .array<"s22">(after<"s21">, [](const std::vector<int>& xs) { return xs; })
        .map<"s23">(over<"s22">, {.timeout = 23}, [](int x, Context&) { return x + 1; })
        .step<"s24">(after<"s23", "s01">,
                     [](const std::vector<int>& xs, int count) {
                       return static_cast<int>(xs.size()) + count;
                     })
        .step<"s25">(after<"s24">, when({{"s24", 25}}), when_unmet_skip,
                     [](int x) { return x * 2; })
        .step<"s26">(after<"s25", "s24">,
                     [](std::optional<int> a, int b) { return a.value_or(0) + b; })
        .step<"s27">(after<"s26">, when_exhausted_skip_cascade, {.max_attempts = 1},
                     [](int x) { return x; })
        .map<"s28">(over<"s02">, [](int line) { return line * 28; })
        .array<"s29">(after<"s28">, [](const std::vector<int>& xs) { return xs; })
        .map<"s30">(over<"s29">, {.timeout = 30}, [](int x, Context&) { return x + 1; });

}  // namespace pgflow::testing::large

#endif  // PGFLOW_TESTS_TESTING_LARGE_FLOW_H_
