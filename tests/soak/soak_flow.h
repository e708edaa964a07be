// The soak's flow, shared by the worker program (which runs it) and the driver (which starts
// runs and knows what each one must output). `soak` has a root array, a map over it, a second
// root step, a fan-in after the map and a final step after two dependencies that also reads
// the run input lazily (the worker's input-loader connection):
//
//   numbers (array: base .. base+n-1) -> squares (map: x*x) -> sum --+
//   label   ("run-<base>-<n>") ---------------------------------------+-> report {label, sum, count}
//
// Every handler first calls the Recorder (the worker writes one line per execution, see
// execution_log.h), then sleeps a few milliseconds so that tasks are in flight when a worker
// is killed. Outputs depend only on the input: expected_output() is the run's output.
#ifndef PGFLOW_TESTS_SOAK_SOAK_FLOW_H_
#define PGFLOW_TESTS_SOAK_SOAK_FLOW_H_

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "nlohmann/json.hpp"
#include "pgflow/context.h"
#include "pgflow/flow.h"

namespace pgflow::soak {

inline constexpr char kFlowSlug[] = "soak";

struct SoakInput {
  int n = 0;              // elements of the map
  std::int64_t base = 0;  // first element
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(SoakInput, n, base)

struct Report {
  std::string label;
  std::int64_t sum = 0;
  int count = 0;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Report, label, sum, count)

// Called with 'S' at the start of every handler execution, and with 'F' when the handler
// returns an error (only `report` can: its input load).
using Recorder = std::function<void(const pgflow::Context&, char event)>;

// The run's output for `input`: the leaf step's output, keyed by its slug.
inline nlohmann::json expected_output(const SoakInput& input) {
  std::int64_t sum = 0;
  for (int i = 0; i < input.n; ++i) sum += (input.base + i) * (input.base + i);
  return {{"report", Report{absl::StrCat("run-", input.base, "-", input.n), sum, input.n}}};
}

// Sleeps 1..max_ms milliseconds, varying with the task (not with time: outputs stay exact).
inline void simulate_work(const pgflow::Context& ctx, int max_ms) {
  const std::size_t h =
      std::hash<std::string>{}(ctx.run_id()) ^ static_cast<std::size_t>(ctx.task_index() * 7919);
  std::this_thread::sleep_for(
      std::chrono::milliseconds(1 + static_cast<int>(h % static_cast<std::size_t>(max_ms))));
}

// Timeout 3 s (the minimum): a killed worker's tasks are requeued by stall recovery 33 s after
// they started. Handlers never fail by themselves; max_attempts 5 leaves room for the three
// requeues stall recovery allows.
inline auto soak_flow(Recorder record) {
  return pgflow::Flow<"soak", SoakInput>({.max_attempts = 5, .base_delay = 1, .timeout = 3})
      .array<"numbers">([record](const SoakInput& in, pgflow::Context& ctx) {
        record(ctx, 'S');
        simulate_work(ctx, 10);
        std::vector<std::int64_t> numbers;
        for (int i = 0; i < in.n; ++i) numbers.push_back(in.base + i);
        return numbers;
      })
      .map<"squares">(pgflow::over<"numbers">,
                      [record](const std::int64_t& x, pgflow::Context& ctx) {
                        record(ctx, 'S');
                        simulate_work(ctx, 40);
                        return x * x;
                      })
      .step<"label">([record](const SoakInput& in, pgflow::Context& ctx) {
        record(ctx, 'S');
        simulate_work(ctx, 10);
        return absl::StrCat("run-", in.base, "-", in.n);
      })
      .step<"sum">(pgflow::after<"squares">,
                   [record](const std::vector<std::int64_t>& squares, pgflow::Context& ctx) {
                     record(ctx, 'S');
                     simulate_work(ctx, 10);
                     std::int64_t sum = 0;
                     for (std::int64_t s : squares) sum += s;
                     return sum;
                   })
      .step<"report">(pgflow::after<"sum", "label">,
                      [record](const std::int64_t& sum, const std::string& label,
                               pgflow::Context& ctx) -> absl::StatusOr<Report> {
                        record(ctx, 'S');
                        simulate_work(ctx, 10);
                        // The input of a dependent step is loaded on demand (its own connection).
                        absl::StatusOr<SoakInput> in = ctx.flow_input<SoakInput>();
                        if (!in.ok()) {
                          record(ctx, 'F');
                          return in.status();
                        }
                        return Report{label, sum, in->n};
                      });
}

}  // namespace pgflow::soak

#endif  // PGFLOW_TESTS_SOAK_SOAK_FLOW_H_
