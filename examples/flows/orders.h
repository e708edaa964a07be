// The order-processing flow of the deployment examples (worker_main.cc serves it,
// producer.cc starts it inside its own transaction): reserve stock for every line, charge,
// then confirm.
#ifndef PGFLOW_EXAMPLES_FLOWS_ORDERS_H_
#define PGFLOW_EXAMPLES_FLOWS_ORDERS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/flow.h"

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

inline const auto flow =
    pgflow::Flow<"processOrder", Order>({.max_attempts = 3, .base_delay = 1, .timeout = 30})
        .array<"lines">([](const Order& o) { return o.lines; })
        .map<"reserve">(pgflow::over<"lines">,
                        [](const Line& line) -> absl::StatusOr<int> {
                          if (line.quantity <= 0)
                            return absl::InvalidArgumentError("quantity must be positive");
                          return line.quantity;
                        })
        .step<"charge">(
            pgflow::after<"reserve">,
            [](const std::vector<int>& reserved, pgflow::Context& ctx) -> absl::StatusOr<Receipt> {
              absl::StatusOr<Order> order = ctx.flow_input<Order>();
              if (!order.ok()) return order.status();
              int items = 0;
              for (int n : reserved) items += n;
              return Receipt{order->order_id, items};
            })
        .step<"confirm">(pgflow::after<"charge">, [](const Receipt& r) {
          return "order " + std::to_string(r.order_id) + ": " + std::to_string(r.items) +
                 " items charged";
        });

}  // namespace orders

#endif  // PGFLOW_EXAMPLES_FLOWS_ORDERS_H_
