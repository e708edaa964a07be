// Links against the installed package and uses its public API.
#include <cstdio>

#include "pgflow/migrate.h"

int main() {
  const auto migrations = pgflow::bundled_migrations();
  if (migrations.empty()) {
    std::fprintf(stderr, "no embedded migrations\n");
    return 1;
  }
  std::printf("pgflow carries %zu migrations, first %s\n", migrations.size(),
              migrations.front().file_name().c_str());
  return 0;
}
