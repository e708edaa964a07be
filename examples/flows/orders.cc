// The order-processing flow and its handlers: one TU per flow, so that only the worker compiles
// them (docs/flows.md, "Large codebases").
#include "flows/orders.h"

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "pgflow/flow.h"

namespace orders {
namespace {

// pgflow::implements: the flow must match orders::Signature, or this TU does not compile.
const auto flow = pgflow::implements<Signature>(
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
        }));

}  // namespace

const pgflow::FlowDefinition& definition() { return flow.definition(); }

}  // namespace orders
