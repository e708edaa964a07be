// expect: pgflow: .map\(\) iterates its source step's output, but that output type is not an array
// context: Source = std::(__cxx11::)?basic_string<char>\]
// A string is a JSON string, not an array.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"maps", int>()
                      .step<"name">([](int) { return std::string("abc"); })
                      .map<"each">(pgflow::over<"name">, [](char c) { return c; });
