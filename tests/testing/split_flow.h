// wSplit, a flow with one queue per step, run by tests and by the worker child process
// (tests/integration/worker_process_main.cc): `plan` turns the run input n into the array
// 0..n-1, the map `each` doubles every element, and `summary` counts the plan without waiting
// for the map. A run of n = 0 needs no `each` worker: its map is empty and completes without
// tasks. Elements from `hold_from` on (none when negative) hold their task until the worker
// stops, so a test can kill the map's workers in the middle of a map, deterministically.
#ifndef PGFLOW_TESTS_TESTING_SPLIT_FLOW_H_
#define PGFLOW_TESTS_TESTING_SPLIT_FLOW_H_

#include <chrono>
#include <numeric>
#include <thread>
#include <vector>

#include "pgflow/context.h"
#include "pgflow/flow.h"
#include "pgflow/step_queued_flow.h"

namespace pgflow::testing {

inline auto split_flow(int hold_from) {
  return pgflow::with_step_queues(
      pgflow::Flow<"wSplit", int>({.timeout = 10})
          .array<"plan">([](int n) {
            std::vector<int> items(static_cast<std::size_t>(n));
            std::iota(items.begin(), items.end(), 0);
            return items;
          })
          .map<"each">(pgflow::over<"plan">,
                       [hold_from](int x, pgflow::Context& ctx) {
                         while (hold_from >= 0 && x >= hold_from &&
                                !ctx.stop_token().stop_requested()) {
                           std::this_thread::sleep_for(std::chrono::milliseconds(20));
                         }
                         return x * 2;
                       })
          .step<"summary">(pgflow::after<"plan">, [](const std::vector<int>& items) {
            return static_cast<int>(items.size());
          }));
}

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_SPLIT_FLOW_H_
