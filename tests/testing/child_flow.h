// The flow run by tests/integration/worker_process_main.cc in a child process, and by the
// tests that take over its work: same shape, handlers differ only in how long they take.
#ifndef PGFLOW_TESTS_TESTING_CHILD_FLOW_H_
#define PGFLOW_TESTS_TESTING_CHILD_FLOW_H_

#include <chrono>
#include <thread>

#include "pgflow/flow.h"

namespace pgflow::testing {

// wChild: one step `work` that sleeps `sleep_ms` (ignoring its stop token) and returns x + 1.
inline auto child_flow(int sleep_ms) {
  return pgflow::Flow<"wChild", int>().step<"work">([sleep_ms](int x) {
    std::this_thread::sleep_for(std::chrono::milliseconds(sleep_ms));
    return x + 1;
  });
}

}  // namespace pgflow::testing

#endif  // PGFLOW_TESTS_TESTING_CHILD_FLOW_H_
