// The example at the top of README.md, verbatim, so that it keeps compiling.
#include "pgflow/flow.h"
#include "pgflow/worker.h"

struct Signup {
  std::string email;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Signup, email)

inline const auto greet =
    pgflow::Flow<"greetUser", Signup>({.max_attempts = 3})
        .step<"name">([](const Signup& s) { return s.email.substr(0, s.email.find('@')); })
        .step<"message">(pgflow::after<"name">, [](const std::string& n) { return "hi " + n; });

int main() {
  // Until SIGTERM; DATABASE_URL says where. A worker that cannot start, or stops by itself,
  // logs why (to stderr by default) and returns it.
  return pgflow::EdgeWorker::run(greet).ok() ? 0 : 1;
}
