// expect: pgflow: this step slug differs from an earlier step's slug only in letter case
// Slugs must differ in more than letter case.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"dup", int>().step<"fetch">([](int x) { return x; }).step<"Fetch">([](int x) {
      return x;
    });
