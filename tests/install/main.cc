// Links against the installed package and uses its public API.
#include <cstdio>
#include <string>
#include <vector>

#include "pgflow/flow.h"
#include "pgflow/migrate.h"

// A tiny typed flow: proves the installed headers (detail/ included) compile in a consumer.
const auto greet =
    pgflow::Flow<"greetUsers", std::vector<std::string>>()
        .map<"hello">([](const std::string& name) { return "hello " + name; })
        .step<"count">(pgflow::after<"hello">,
                       [](const std::vector<std::string>& greetings) { return greetings.size(); });

int main() {
  const auto migrations = pgflow::bundled_migrations();
  if (migrations.empty()) {
    std::fprintf(stderr, "no embedded migrations\n");
    return 1;
  }
  std::printf("pgflow carries %zu migrations, first %s\n", migrations.size(),
              migrations.front().file_name().c_str());
  std::printf("flow shape: %s\n", pgflow::shape_of(greet).dump().c_str());
  return pgflow::validate(greet).ok() ? 0 : 1;
}
