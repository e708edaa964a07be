// bench/compile: a producer — a flow's signature, pgflow/client.h and one typed start.
#include <string>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/flow_signature.h"

namespace shop {
struct Order {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, items)
using Signature =
    pgflow::FlowSignature<"processOrder", Order, pgflow::Step<"items", std::vector<int>>,
                          pgflow::Leaf<"total", int>>;
}  // namespace shop

int main() {
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();
  if (!client.ok()) return 1;
  absl::StatusOr<std::string> run = client->start_run(shop::Signature{}, shop::Order{"o1", {1, 2}});
  return run.ok() ? 0 : 1;
}
