// expect: pgflow: base_delay must be at least 1 second
// Flow options are checked too.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"options", int>({.base_delay = 0});
