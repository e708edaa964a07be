// expect: pgflow: a step slug can be at most 128 characters long
// At most 128 characters.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"slugs", int>()
        .step<
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
            "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa">([](int x) { return x; });
