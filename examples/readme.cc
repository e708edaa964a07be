// The example at the top of README.md, verbatim, so that it keeps compiling.
#include <cstdio>

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
  absl::Status s = pgflow::EdgeWorker::run(greet);  // until SIGTERM; DATABASE_URL says where
  if (!s.ok()) std::fprintf(stderr, "worker stopped: %s\n", std::string(s.message()).c_str());
  return s.ok() ? 0 : 1;
}
