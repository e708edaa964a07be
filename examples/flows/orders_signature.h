// The order-processing flow's signature: its input and step output types, without handlers.
// producer.cc starts runs with it and compiles no handler; orders.cc defines the flow, checked
// against it (docs/flows.md, "Large codebases").
#ifndef PGFLOW_EXAMPLES_FLOWS_ORDERS_SIGNATURE_H_
#define PGFLOW_EXAMPLES_FLOWS_ORDERS_SIGNATURE_H_

#include <string>
#include <vector>

#include "nlohmann/json.hpp"
#include "pgflow/flow_signature.h"

namespace orders {

struct Line {
  std::string sku;
  int quantity = 1;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Line, sku, quantity)

struct Order {
  long long order_id = 0;  // the producer's own table row
  std::vector<Line> lines;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, order_id, lines)

struct Receipt {
  long long order_id = 0;
  int items = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Receipt, order_id, items)

using Signature =
    pgflow::FlowSignature<"processOrder", Order, pgflow::Step<"lines", std::vector<Line>>,
                          pgflow::Step<"reserve", std::vector<int>>,
                          pgflow::Step<"charge", Receipt>, pgflow::Leaf<"confirm", std::string>>;

}  // namespace orders

#endif  // PGFLOW_EXAMPLES_FLOWS_ORDERS_SIGNATURE_H_
