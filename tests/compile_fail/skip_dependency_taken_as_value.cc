// expect: pgflow: a dependency in after<...> is skipped with mode skip .when_unmet or when_exhausted., so the handler must take it as std::optional<T>
// `gift` may be skipped (condition, default skip): dependents get std::optional<int>.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

using nlohmann::literals::operator""_json;
const auto flow = pgflow::Flow<"conditions", int>()
                      .step<"gift">(pgflow::when(R"({"vip": true})"_json), [](int x) { return x; })
                      .step<"report">(pgflow::after<"gift">, [](int gift) { return gift; });
