// The example at the top of README.md, verbatim, so that it keeps compiling.
#include <string>

#include "nlohmann/json.hpp"
#include "pgflow/flow.h"
#include "pgflow/worker.h"

struct Signup { std::string email; };
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email)

inline const auto greet =
    pgflow::Flow<"greetUser", Signup>({.max_attempts = 3})
        .step<"name">([](const Signup& s) { return s.email.substr(0, s.email.find('@')); })
        .step<"message">(pgflow::after<"name">, [](const std::string& n) { return "hi " + n; });

int main() { return pgflow::EdgeWorker::run(greet).ok() ? 0 : 1; }   // until SIGTERM
