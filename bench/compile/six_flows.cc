// bench/compile: six small flows and a client driver in one TU (the "six-flow TU" of
// compile_bench.sh). Each flow has a struct input, five steps (a map among them) and its own
// output types, like a service's flows; the driver starts each and reads its typed output.
#include <string>
#include <vector>

#include "pgflow/client.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"

namespace six {

struct In0 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In0, id, items)
struct Mid0 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid0, id, total)
struct Out0 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out0, summary, ok)

inline const auto flow0 =
    pgflow::Flow<"six0", In0>({.max_attempts = 3})
        .array<"items">([](const In0& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 0; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid0> {
                       absl::StatusOr<In0> in = ctx.flow_input<In0>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid0{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 0}}}}),
                       [](const Mid0& m) { return m.total > 0; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid0& m, std::optional<bool> checked) {
              return Out0{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

struct In1 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In1, id, items)
struct Mid1 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid1, id, total)
struct Out1 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out1, summary, ok)

inline const auto flow1 =
    pgflow::Flow<"six1", In1>({.max_attempts = 3})
        .array<"items">([](const In1& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 1; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid1> {
                       absl::StatusOr<In1> in = ctx.flow_input<In1>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid1{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 1}}}}),
                       [](const Mid1& m) { return m.total > 1; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid1& m, std::optional<bool> checked) {
              return Out1{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

struct In2 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In2, id, items)
struct Mid2 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid2, id, total)
struct Out2 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out2, summary, ok)

inline const auto flow2 =
    pgflow::Flow<"six2", In2>({.max_attempts = 3})
        .array<"items">([](const In2& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 2; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid2> {
                       absl::StatusOr<In2> in = ctx.flow_input<In2>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid2{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 2}}}}),
                       [](const Mid2& m) { return m.total > 2; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid2& m, std::optional<bool> checked) {
              return Out2{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

struct In3 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In3, id, items)
struct Mid3 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid3, id, total)
struct Out3 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out3, summary, ok)

inline const auto flow3 =
    pgflow::Flow<"six3", In3>({.max_attempts = 3})
        .array<"items">([](const In3& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 3; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid3> {
                       absl::StatusOr<In3> in = ctx.flow_input<In3>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid3{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 3}}}}),
                       [](const Mid3& m) { return m.total > 3; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid3& m, std::optional<bool> checked) {
              return Out3{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

struct In4 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In4, id, items)
struct Mid4 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid4, id, total)
struct Out4 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out4, summary, ok)

inline const auto flow4 =
    pgflow::Flow<"six4", In4>({.max_attempts = 3})
        .array<"items">([](const In4& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 4; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid4> {
                       absl::StatusOr<In4> in = ctx.flow_input<In4>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid4{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 4}}}}),
                       [](const Mid4& m) { return m.total > 4; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid4& m, std::optional<bool> checked) {
              return Out4{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

struct In5 {
  std::string id;
  std::vector<int> items;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(In5, id, items)
struct Mid5 {
  std::string id;
  int total = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Mid5, id, total)
struct Out5 {
  std::string summary;
  bool ok = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Out5, summary, ok)

inline const auto flow5 =
    pgflow::Flow<"six5", In5>({.max_attempts = 3})
        .array<"items">([](const In5& in) { return in.items; })
        .map<"double">(pgflow::over<"items">, [](int x) { return 2 * x + 5; })
        .step<"sum">(pgflow::after<"double">,
                     [](const std::vector<int>& xs, pgflow::Context& ctx) -> absl::StatusOr<Mid5> {
                       absl::StatusOr<In5> in = ctx.flow_input<In5>();
                       if (!in.ok()) return in.status();
                       int total = 0;
                       for (int x : xs) total += x;
                       return Mid5{in->id, total};
                     })
        .step<"check">(pgflow::after<"sum">, pgflow::when({{"sum", {{"total", 5}}}}),
                       [](const Mid5& m) { return m.total > 5; })
        .step<"report">(
            pgflow::after<"sum", "check">, [](const Mid5& m, std::optional<bool> checked) {
              return Out5{m.id + ": " + std::to_string(m.total), checked.value_or(false)};
            });

}  // namespace six

int main() {
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();
  if (!client.ok()) return 1;
  int failures = 0;
  auto drive = [&](const auto& flow, const auto& input) {
    absl::StatusOr<pgflow::RunState> run = client->start_flow(flow, input);
    if (!run.ok()) return ++failures, void();
    absl::StatusOr<pgflow::RunState> done =
        client->wait_for_run(run->run_id, std::chrono::seconds(5));
    if (!done.ok()) return ++failures, void();
    using Output = pgflow::FlowOutput<decltype(flow)>;
    if (!done->template output_as<Output>().ok()) ++failures;
  };
  drive(six::flow0, six::In0{"a", {1, 2, 3}});
  drive(six::flow1, six::In1{"a", {1, 2, 3}});
  drive(six::flow2, six::In2{"a", {1, 2, 3}});
  drive(six::flow3, six::In3{"a", {1, 2, 3}});
  drive(six::flow4, six::In4{"a", {1, 2, 3}});
  drive(six::flow5, six::In5{"a", {1, 2, 3}});
  absl::StatusOr<pgflow::EdgeWorker> worker = pgflow::EdgeWorker::start(six::flow0);
  return failures + (worker.ok() ? 0 : 1);
}
