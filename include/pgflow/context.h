// File: pgflow/context.h
//
// pgflow::Context: what a step handler may ask about the task it is running. A handler
// receives it by declaring a trailing `pgflow::Context&` parameter:
//
//   .map<"notifyAll">(pgflow::over<"friends">,
//                     [](const Friend& f, pgflow::Context& ctx) -> absl::StatusOr<int> {
//                       ctx.log().info("notifying", {{"friend", f.id}});
//                       absl::StatusOr<Signup> signup = ctx.flow_input<Signup>();
//                       if (!signup.ok()) return signup.status();
//                       if (ctx.stop_token().stop_requested()) {  // stop, cancel or timeout
//                         return absl::CancelledError("stopping");
//                       }
//                       return notify(f, signup->email, ctx.deadline());
//                     })
//
// The worker builds one Context per task and passes it to exactly one handler call on one
// thread. It is not thread-safe and must not outlive the call; copy what you need.
#ifndef PGFLOW_CONTEXT_H_
#define PGFLOW_CONTEXT_H_

#include <chrono>
#include <functional>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "nlohmann/json.hpp"
#include "pgflow/detail/exact_json.h"
#include "pgflow/log.h"

namespace pgflow {

namespace detail {
// Builds the kInvalidArgument status, marked permanent, for a flow input that does not convert to the
// requested type (non-template, in src/flow/handler.cc).
absl::Status flow_input_conversion_error(std::string_view flow_slug, std::string_view step_slug,
                                         std::string_view reason);
}  // namespace detail

// pgflow::Context
class Context {
 public:
  // Loads the run's input when a handler first asks for it. Supplied by the worker (which
  // caches inputs per run); may be empty when the input is known up front.
  using FlowInputProvider = std::function<absl::StatusOr<nlohmann::json>()>;

  // Everything a Context holds. The worker fills it in; tests build one directly.
  struct Init {
    std::string flow_slug = {};
    std::string run_id = {};  // UUID text
    std::string step_slug = {};
    int task_index = 0;           // 0 for single steps; the element index for map steps
    int attempt = 1;              // 1 for the first attempt
    std::string message_id = {};  // decimal text of the 64-bit PGMQ message id
    // The run input when already known (the claim returns it for root single steps).
    std::optional<nlohmann::json> flow_input = {};
    // Used on the first flow_input() call when `flow_input` is empty.
    FlowInputProvider flow_input_provider = {};
    // Signalled when the worker stops, when the task is no longer wanted, or at the deadline
    // (see stop_token()). The worker fires it; a Context built directly only carries it.
    std::stop_token stop_token = {};
    // When the task's step timeout, counted from its claim, runs out (the worker fires the stop
    // token then); a few seconds later another worker may claim the task again. Default: none.
    std::chrono::system_clock::time_point deadline = std::chrono::system_clock::time_point::max();
    // A logger whose records already carry the flow, run, step and task fields.
    Logger logger = {};
  };

  explicit Context(Init init);

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;
  Context(Context&&) = default;
  Context& operator=(Context&&) = default;

  const std::string& flow_slug() const { return init_.flow_slug; }
  const std::string& run_id() const { return init_.run_id; }
  const std::string& step_slug() const { return init_.step_slug; }
  int task_index() const { return init_.task_index; }
  int attempt() const { return init_.attempt; }
  // The PGMQ message id as decimal text (ids are 64-bit; text keeps them exact everywhere).
  const std::string& message_id() const { return init_.message_id; }

  // The run's input as JSON. Loaded on first use through the provider and cached in this
  // Context; a failed load is returned and not cached (the next call tries again).
  absl::StatusOr<nlohmann::json> flow_input();

  // The run's input converted to T; kInvalidArgument naming the flow and step when the
  // JSON does not convert.
  template <typename T>
  absl::StatusOr<T> flow_input();

  // Fires when the worker stops; when the database no longer wants this task: its run was
  // cancelled (Client::cancel_run) or failed (e.g. another element of the same map exhausted
  // its attempts), or its step was skipped; and at deadline(). Long handlers should poll it (or
  // register a std::stop_callback, which must not block: it runs on the thread that fires the
  // token) and return early. What becomes of the result: once the task is no longer wanted it
  // is dropped, not reported; else, if the deadline fired first, a failure (whatever its status)
  // fails the attempt with kDeadlineExceeded ("step 'x' exceeded its timeout of N s (handler:
  // ...)") while an output still completes the task; after a worker stop it is reported as
  // returned (docs/worker.md, "Handlers that stop when asked").
  const std::stop_token& stop_token() const { return init_.stop_token; }
  // The claim time plus the step's effective timeout; the stop token fires when it passes.
  std::chrono::system_clock::time_point deadline() const { return init_.deadline; }
  const Logger& log() const { return init_.logger; }

 private:
  Init init_;
};

template <typename T>
absl::StatusOr<T> Context::flow_input() {
  absl::StatusOr<nlohmann::json> json = flow_input();
  if (!json.ok()) return json.status();
  try {
    return detail::exact_get<T>(*json);
  } catch (const std::exception& e) {
    return detail::flow_input_conversion_error(init_.flow_slug, init_.step_slug, e.what());
  }
}

}  // namespace pgflow

#endif  // PGFLOW_CONTEXT_H_
