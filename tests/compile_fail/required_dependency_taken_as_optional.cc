// expect: pgflow: the handler takes std::optional<T> for a dependency that always has a value
// context: AfterTag<pgflow::detail::FixedString<1>{"a"}>
// A dependency that cannot be skipped is never std::optional.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"conditions", int>()
        .step<"a">([](int x) { return x; })
        .step<"b">(pgflow::after<"a">, [](const std::optional<int>& a) { return a.value_or(0); });
