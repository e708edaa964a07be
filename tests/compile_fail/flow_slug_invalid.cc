// expect: pgflow: a flow slug can contain only ASCII letters, digits and single underscores
// The flow slug follows the same rules as step slugs.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow = pgflow::Flow<"onboard-user", int>();
