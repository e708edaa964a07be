// File: pgflow/flow_options.h
//
// Retry and timing options of a typed flow and of its steps, as plain aggregates for
// designated initializers:
//
//   pgflow::Flow<"onboardUser", Signup>({.max_attempts = 3, .timeout = 30})
//       .step<"profile">({.timeout = 10, .start_delay = 5}, load_profile);
//
// base_delay, timeout and start_delay are whole seconds, the SQL core's unit: an int (seconds)
// or a std::chrono duration that converts to seconds without loss (`{.timeout = 30s}`,
// `std::chrono::minutes(2)`; milliseconds do not compile). An unset step option inherits the
// flow's value; an unset flow option takes the database default (the SQL core's
// create_flow: max_attempts 3, base_delay 5, timeout 60; start_delay 0).
//
// Values written as literals are checked at compile time: `{.max_attempts = 0}` does not
// compile, and the error line says why. A value known only at run time (configuration)
// goes through pgflow::runtime(n) (text, e.g. a DeployedFlow's alias: pgflow::runtime(str));
// it is checked by pgflow::validate() instead:
//
//   .step<"send">({.timeout = pgflow::runtime(config.send_timeout)}, send);
//
// Ranges (upstream pgflow's DSL rules): max_attempts >= 1, base_delay >= 1,
// timeout >= 3, start_delay >= 0; and ours: concurrency_limit >= 1.
//
// concurrency_limit caps how many tasks of the step (or, on the flow, of all its steps) are
// started at once across every worker; see docs/flow-control.md. It is deployment metadata
// beside the shape (shape_of() leaves it out; the worker deploys it with the shape):
//
//   pgflow::Flow<"crawl", Site>({.concurrency_limit = 50})
//       .step<"fetch">({.concurrency_limit = 5}, fetch_page);
//
// concurrency_key shares a limit's slots fairly among the values of a field of the run input
// (tenants): round robin, weighted by an optional number in the input, each value capped by an
// optional limit of its own. Paths are dotted field names, checked at compile time:
//
//   pgflow::Flow<"crawl", Site>({.concurrency_limit = 50,
//                                .concurrency_key = {.path = "tenant", .limit = 10,
//                                                    .weight = "plan.weight"}})
#ifndef PGFLOW_FLOW_OPTIONS_H_
#define PGFLOW_FLOW_OPTIONS_H_

#include <chrono>
#include <concepts>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>

namespace pgflow {

// pgflow::RuntimeValue
//
// A numeric option value that is not a compile-time constant. It skips the compile-time
// range check; pgflow::validate() (run by the worker at startup) reports it instead.
struct RuntimeValue {
  int value;
};

namespace detail {
// Whole seconds as the SQL core's int, saturated rather than wrapped (2^32 + 10 s must not
// become 10 s): such a value is then as long as an option can be.
constexpr int saturated_seconds(std::chrono::seconds value) {
  constexpr std::chrono::seconds::rep kMax = std::numeric_limits<int>::max();
  constexpr std::chrono::seconds::rep kMin = std::numeric_limits<int>::min();
  return static_cast<int>(value.count() > kMax   ? kMax
                          : value.count() < kMin ? kMin
                                                 : value.count());
}
}  // namespace detail

// Wraps a value read at run time, e.g. `{.timeout = pgflow::runtime(cfg.timeout)}`.
constexpr RuntimeValue runtime(int value) { return RuntimeValue{value}; }
// Options are whole numbers: a fraction would be truncated (convert it yourself, saying how).
template <std::floating_point F>
RuntimeValue runtime(F value) = delete;
// The same for a time option given as a duration in whole seconds.
constexpr RuntimeValue runtime(std::chrono::seconds value) {
  return RuntimeValue{detail::saturated_seconds(value)};
}

// pgflow::RuntimeText
//
// A text option that is not a compile-time literal (e.g. an alias read from configuration):
// it skips the compile-time check; pgflow::validate() reports it instead.
struct RuntimeText {
  std::string value;
};

// Wraps a text read at run time, e.g. `{.alias = pgflow::runtime(config.alias)}`.
inline RuntimeText runtime(std::string value) { return RuntimeText{std::move(value)}; }

namespace detail {

// Never defined and not constexpr: calling it while evaluating a consteval constructor is
// what makes an out-of-range literal a compile error. The compiler shows the calling line,
// which carries the explanation.
void pgflow_option_value_out_of_range(const char* explanation);

struct MaxAttemptsRule {
  static constexpr bool kSeconds = false;
  static consteval void check(int v) {
    if (v < 1)
      pgflow_option_value_out_of_range(
          "pgflow: max_attempts must be at least 1 (the first attempt counts); use 1 to disable "
          "retries");
  }
};
struct BaseDelayRule {
  static constexpr bool kSeconds = true;
  static consteval void check(int v) {
    if (v < 1)
      pgflow_option_value_out_of_range(
          "pgflow: base_delay must be at least 1 second; leave it unset to inherit the flow's "
          "value");
  }
};
struct TimeoutRule {
  static constexpr bool kSeconds = true;
  static consteval void check(int v) {
    if (v < 3)
      pgflow_option_value_out_of_range(
          "pgflow: timeout must be at least 3 seconds; leave it unset to inherit the flow's value");
  }
};
struct ConcurrencyLimitRule {
  static constexpr bool kSeconds = false;
  static consteval void check(int v) {
    if (v < 1)
      pgflow_option_value_out_of_range(
          "pgflow: concurrency_limit must be at least 1; leave it unset for no limit");
  }
};
struct KeyLimitRule {
  static constexpr bool kSeconds = false;
  static consteval void check(int v) {
    if (v < 1)
      pgflow_option_value_out_of_range(
          "pgflow: concurrency_key.limit must be at least 1; leave it unset for no cap per key");
  }
};
struct StartDelayRule {
  static constexpr bool kSeconds = true;
  static consteval void check(int v) {
    if (v < 0)
      pgflow_option_value_out_of_range(
          "pgflow: start_delay cannot be negative; use 0 (the default) to start at once");
  }
};

// An optional int option whose literal values are range-checked at compile time.
template <typename Rule>
class CheckedOption {
 public:
  constexpr CheckedOption() = default;
  consteval CheckedOption(int value) : value_(value) { Rule::check(value); }  // NOLINT: implicit
  constexpr CheckedOption(RuntimeValue value) : value_(value.value) {}        // NOLINT: implicit
  // A time option as a duration that converts to whole seconds without loss.
  template <typename Rep, typename Period>
  requires(Rule::kSeconds&& std::is_convertible_v<
           std::chrono::duration<Rep, Period>,
           std::chrono::seconds>) consteval CheckedOption(std::chrono::duration<Rep, Period>
                                                              value)  // NOLINT: implicit
      : CheckedOption(detail::saturated_seconds(std::chrono::seconds(value))) {}
  // A finer duration (milliseconds) would be rounded: refused instead.
  template <typename Rep, typename Period>
  requires(Rule::kSeconds &&
           !std::is_convertible_v<
               std::chrono::duration<Rep, Period>,
               std::chrono::seconds>) consteval CheckedOption(std::chrono::duration<Rep, Period>
                                                                  value) {  // NOLINT: implicit
    if (value.count() == value.count()) {
      pgflow_option_value_out_of_range(
          "pgflow: time options are whole seconds (the SQL core's unit): use std::chrono::seconds "
          "or a coarser duration, or an int");
    }
  }

  // A fraction (`.start_delay = 0.5`) would be truncated to an int: refused instead.
  template <std::floating_point F>
  consteval CheckedOption(F value) {  // NOLINT: implicit
    if (value == value || value != value) {
      pgflow_option_value_out_of_range(
          "pgflow: options are whole numbers (attempts, or whole seconds): a fraction would be "
          "truncated; write an int, or a std::chrono::seconds (or coarser) duration");
    }
  }

  // The value, or nullopt when unset (inherit / database default).
  constexpr std::optional<int> value() const { return value_; }
  // A time option's value as a duration.
  constexpr std::optional<std::chrono::seconds> seconds() const requires Rule::kSeconds {
    if (!value_) return std::nullopt;
    return std::chrono::seconds(*value_);
  }

 private:
  std::optional<int> value_;
};

// A path into the run input: dotted field names ("tenant", "account.id"), each non-empty.
// Literals are checked at compile time; pgflow::runtime(text) by validate().
class InputPath {
 public:
  constexpr InputPath() = default;
  consteval InputPath(const char* path) : path_(path) {  // NOLINT: implicit
    bool segment_empty = true;
    for (const char* c = path;; ++c) {
      if (*c == '.' || *c == '\0') {
        if (segment_empty)
          pgflow_option_value_out_of_range(
              "pgflow: a concurrency_key path is dotted field names of the run input, such as "
              "\"tenant\" or \"account.id\": no empty name, no leading, trailing or double dot");
        if (*c == '\0') break;
        segment_empty = true;
      } else {
        segment_empty = false;
      }
    }
  }
  InputPath(RuntimeText path) : runtime_(std::move(path.value)) {}  // NOLINT: implicit

  // The path, or nullopt when unset.
  std::optional<std::string> value() const {
    if (path_ != nullptr) return std::string(path_);
    return runtime_;
  }

 private:
  const char* path_ = nullptr;
  std::optional<std::string> runtime_;
};

}  // namespace detail

// Total attempts per task, the first one included. Default: the flow's value (flow: 3).
using MaxAttempts = detail::CheckedOption<detail::MaxAttemptsRule>;
// Seconds; retry n waits base_delay * 2^n. Default: the flow's value (flow: 5).
using BaseDelay = detail::CheckedOption<detail::BaseDelayRule>;
// Seconds a task may run before its message becomes visible again. Default: flow's (60).
using Timeout = detail::CheckedOption<detail::TimeoutRule>;
// Seconds between the step becoming ready and its tasks becoming visible. Default: 0.
using StartDelay = detail::CheckedOption<detail::StartDelayRule>;
// Most tasks (of a step, or of the whole flow) started at once across every worker process
// and host; the others wait queued. A deployment option beside the shape, like the queue
// mode: not part of shape_of(), compared at startup. Default: unset (no limit).
using ConcurrencyLimit = detail::CheckedOption<detail::ConcurrencyLimitRule>;

// Most tasks of one key value started at once (within the limit the key shares).
using KeyLimit = detail::CheckedOption<detail::KeyLimitRule>;
// A dotted path into the run input ("tenant", "account.id").
using InputPath = detail::InputPath;

// pgflow::ConcurrencyKey
//
// Fair shares of a concurrency limit (the step's or the flow's; a key without one is refused
// by validate()): the limit's slots go round robin to the values at `path` in the run input
// (a run without one shares the value ""), each value weighted by the positive number at
// `weight` (default 1: equal shares) and holding at most `limit` slots (default: no cap of its
// own). On the flow it applies to every step without a key of its own, and its shares and cap
// count across them; on a step, within the step. See docs/flow-control.md, "Fair shares".
struct ConcurrencyKey {
  InputPath path = {};    // Required to set a key: e.g. "tenant".
  KeyLimit limit = {};    // Default: unset (a value may take every free slot).
  InputPath weight = {};  // Default: unset (every value weighs 1).
};

// pgflow::FlowOptions
//
// Defaults for every step of the flow, except concurrency_limit: one cap shared by all the
// flow's steps together. There is no flow-level start_delay (it would compound along the
// graph), as upstream.
struct FlowOptions {
  MaxAttempts max_attempts = {};            // Default: unset (database default 3).
  BaseDelay base_delay = {};                // Default: unset (database default 5).
  Timeout timeout = {};                     // Default: unset (database default 60).
  ConcurrencyLimit concurrency_limit = {};  // Default: unset (no limit for the whole flow).
  ConcurrencyKey concurrency_key = {};      // Default: unset (by run priority, then oldest).
};

// pgflow::StepOptions
//
// Per-step overrides; an unset value inherits the flow's (concurrency_limit: this step's own
// cap, on top of the flow's shared one).
struct StepOptions {
  MaxAttempts max_attempts = {};            // Default: the flow's.
  BaseDelay base_delay = {};                // Default: the flow's.
  Timeout timeout = {};                     // Default: the flow's.
  StartDelay start_delay = {};              // Default: 0.
  ConcurrencyLimit concurrency_limit = {};  // Default: unset (only the flow's limit applies).
  ConcurrencyKey concurrency_key = {};      // Default: the flow's key, if any.
};

}  // namespace pgflow

#endif  // PGFLOW_FLOW_OPTIONS_H_
