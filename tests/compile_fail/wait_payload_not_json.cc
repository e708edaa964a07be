// expect: pgflow: a signal's payload type \(the step's output\) has no JSON conversion
// A signal's payload is the step's output: JSON-convertible.
#include "pgflow/flow.h"

struct Opaque {
  int x;
};

const auto flow = pgflow::Flow<"waits", int>().signal<"approve", Opaque>();
