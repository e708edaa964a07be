// expect: pgflow: the handler cannot be called with this step's input
// context: HandlerCall<<lambda\(int\)>, TypeList<std::(__cxx11::)?basic_string<char
// `name` outputs a std::string, the handler takes an int.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"handlers", int>()
                      .step<"name">([](int) { return std::string("x"); })
                      .step<"length">(pgflow::after<"name">, [](int n) { return n; });
