// expect: pgflow: this flow already has a step with this slug
// Every step slug is unique within its flow.
#include <optional>
#include <string>
#include <vector>

#include "pgflow/flow.h"

const auto flow =
    pgflow::Flow<"dup", int>().step<"fetch">([](int x) { return x; }).step<"fetch">([](int x) {
      return x;
    });
