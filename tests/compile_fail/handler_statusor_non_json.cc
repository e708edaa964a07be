// expect: pgflow: the handler's result type has no JSON conversion
// context: Output = Opaque. Returned = absl::([a-z0-9_]+::)?StatusOr<Opaque>\]
// absl::StatusOr<T> needs a JSON-convertible T.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

struct Opaque {
  int value;
};
const auto flow = pgflow::Flow<"handlers", int>().step<"opaque">(
    [](int x) -> absl::StatusOr<Opaque> { return Opaque{x}; });
