#include "pgflow/flow_definition.h"

#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "internal/strings.h"
#include "internal/text_checks.h"
#include "pgflow/detail/slug.h"
#include "pgflow/flow_options.h"

namespace pgflow {
namespace {

using internal::absl_view;

nlohmann::ordered_json pattern_shape(const std::optional<nlohmann::json>& pattern) {
  nlohmann::ordered_json wrapper;
  if (!pattern.has_value()) {
    wrapper["defined"] = false;
  } else {
    wrapper["defined"] = true;
    wrapper["value"] = nlohmann::ordered_json(*pattern);
  }
  return wrapper;
}

void put_if_set(nlohmann::ordered_json& object, const char* key, const std::optional<int>& value) {
  if (value.has_value()) object[key] = *value;
}

// A time option as the SQL core's whole seconds.
// (saturated as a time option's value is: the SQL columns are int)
std::optional<int> in_seconds(const std::optional<std::chrono::seconds>& value) {
  if (!value) return std::nullopt;
  return detail::saturated_seconds(*value);
}

// Collects problems as "flow "f", step "s", field "x": message".
class Problems {
 public:
  explicit Problems(const FlowDefinition& flow) : flow_(flow.slug) {}

  // Slugs are shown escaped and bounded (internal::printable): a hand-built definition's slug
  // may hold anything.
  void flow_field(std::string_view field, std::string_view message) {
    list_.push_back(absl::StrCat("flow ", internal::printable(flow_), ", field \"",
                                 absl_view(field), "\": ", absl_view(message)));
  }
  void step_field(std::string_view step, std::string_view field, std::string_view message) {
    list_.push_back(absl::StrCat("flow ", internal::printable(flow_), ", step ",
                                 internal::printable(step), ", field \"", absl_view(field),
                                 "\": ", absl_view(message)));
  }

  absl::Status status() const {
    if (list_.empty()) return absl::OkStatus();
    return absl::InvalidArgumentError(absl::StrJoin(list_, "; "));
  }

 private:
  std::string flow_;
  std::vector<std::string> list_;
};

// A problem with a field of the flow (`step` null) or of a step.
void report(Problems& problems, const std::string* step, std::string_view field,
            std::string_view message) {
  if (step == nullptr) {
    problems.flow_field(field, message);
  } else {
    problems.step_field(*step, field, message);
  }
}

void check_range(Problems& problems, const std::string* step, std::string_view field,
                 const std::optional<int>& value, int min, std::string_view unit) {
  if (!value.has_value() || *value >= min) return;
  std::string message = absl::StrCat("must be at least ", min, unit.empty() ? "" : " ",
                                     absl_view(unit), ", got ", *value);
  report(problems, step, field, message);
}

// A wait's duration goes to SQL as it is (wait_shape), where _wait_problem refuses one beyond
// the int range: refused here first (in_seconds saturates, so check_range cannot see it).
void check_int_seconds(Problems& problems, const std::string* step, std::string_view field,
                       const std::optional<std::chrono::seconds>& value) {
  if (!value || value->count() <= std::numeric_limits<int>::max()) return;
  report(problems, step, field,
         absl::StrCat("must be at most 2147483647 seconds (about 68 years), got ", value->count()));
}

// The field names of a dotted input path ("account.id"); "" and ".." give empty names.
std::vector<std::string> field_names(const std::string& dotted) {
  std::vector<std::string> names(1);
  for (char c : dotted) {
    if (c == '.') {
      names.emplace_back();
    } else {
      names.back().push_back(c);
    }
  }
  return names;
}

bool has_empty_name(const std::string& dotted) {
  const std::vector<std::string> names = field_names(dotted);
  return std::any_of(names.begin(), names.end(), [](const std::string& n) { return n.empty(); });
}

void put_key_if_set(nlohmann::ordered_json& object,
                    const std::optional<ConcurrencyKeyValues>& key) {
  if (!key) return;
  nlohmann::ordered_json json = {{"path", field_names(key->path)}};
  put_if_set(json, "limit", key->limit);
  if (key->weight_path) json["weightPath"] = field_names(*key->weight_path);
  object["concurrencyKey"] = std::move(json);
}

// A concurrency key's paths and limit; `has_limit`: whether a limit applies for it to share.
void check_key(Problems& problems, const std::string* step,
               const std::optional<ConcurrencyKeyValues>& key, bool has_limit) {
  if (!key) return;
  if (has_empty_name(key->path)) {
    report(problems, step, "concurrency_key.path",
           absl::StrCat("must be dotted field names of the run input such as \"tenant\", got ",
                        internal::printable(key->path)));
  }
  if (key->weight_path && has_empty_name(*key->weight_path)) {
    report(problems, step, "concurrency_key.weight",
           absl::StrCat("must be dotted field names of the run input such as \"plan.weight\", "
                        "got ",
                        internal::printable(*key->weight_path)));
  }
  check_range(problems, step, "concurrency_key.limit", key->limit, 1, "");
  if (!has_limit) {
    report(problems, step, "concurrency_key",
           step != nullptr ? "shares a concurrency limit, and neither the step nor the flow has one"
                           : "shares a concurrency limit, and neither the flow nor any of its "
                             "steps has one");
  }
}

// A wait step's "wait": pgflow.steps.wait, which the SQL core checks (_wait_problem).
nlohmann::ordered_json wait_shape(const WaitDefinition& wait) {
  nlohmann::ordered_json w;
  if (wait.kind == WaitDefinition::Kind::kSignal) {
    w["kind"] = "signal";
    if (wait.timeout) w["timeout"] = wait.timeout->count();
    if (wait.timeout_output) w["timeoutOutput"] = *wait.timeout_output;
  } else {
    w["kind"] = "sleep";
    if (wait.sleep_for) w["seconds"] = wait.sleep_for->count();
    if (!wait.sleep_until.empty()) w["until"] = wait.sleep_until;
  }
  return w;
}

// A wait step: a valid wait (the rules of SQL's _wait_problem), and nothing a handler needs.
void check_wait(Problems& problems, const StepDefinition& step) {
  const WaitDefinition& wait = *step.wait;
  const std::string* name = &step.slug;
  if (step.handler) report(problems, name, "handler", "a wait step has no handler");
  const StepOptionValues& o = step.options;
  if (o.max_attempts || o.base_delay || o.timeout || o.start_delay || o.concurrency_limit ||
      o.concurrency_key) {
    report(problems, name, "options",
           "a wait step takes no options: it has no handler, attempts or timeout of its own (a "
           "signal's timeout is part of its wait)");
  }
  const bool signal = wait.kind == WaitDefinition::Kind::kSignal;
  if (signal) {
    check_range(problems, name, "wait.timeout", in_seconds(wait.timeout), 1, "second");
    check_int_seconds(problems, name, "wait.timeout", wait.timeout);
    if (wait.timeout_output && !wait.timeout) {
      report(problems, name, "wait.timeout_output", "needs a wait.timeout");
    }
    if (wait.sleep_for || !wait.sleep_until.empty()) {
      report(problems, name, "wait", "a wait for a signal has no sleep_for or sleep_until");
    }
    return;
  }
  if (wait.timeout || wait.timeout_output) {
    report(problems, name, "wait", "a sleep has no timeout or timeout_output");
  }
  if (wait.sleep_for.has_value() == !wait.sleep_until.empty()) {
    report(problems, name, "wait", "a sleep needs exactly one of sleep_for and sleep_until");
  }
  check_range(problems, name, "wait.sleep_for", in_seconds(wait.sleep_for), 0, "seconds");
  check_int_seconds(problems, name, "wait.sleep_for", wait.sleep_for);
  if (!wait.sleep_until.empty()) {
    if (std::any_of(wait.sleep_until.begin(), wait.sleep_until.end(),
                    [](const std::string& n) { return n.empty(); })) {
      report(problems, name, "wait.sleep_until",
             "must be field names of the step's input, such as \"run.ship_at\"");
    }
    if (step.type == StepType::kMap) {
      report(problems, name, "wait.sleep_until",
             "a map step sleeps for sleep_for: sleep_until reads a single step's input");
    }
  }
}

}  // namespace

std::string_view to_string(StepType type) {
  switch (type) {
    case StepType::kSingle:
      return "single";
    case StepType::kMap:
      return "map";
  }
  return "single";
}

std::string_view to_string(WhenMode mode) {
  switch (mode) {
    case WhenMode::kFail:
      return "fail";
    case WhenMode::kSkip:
      return "skip";
    case WhenMode::kSkipCascade:
      return "skip-cascade";
  }
  return "fail";
}

std::string_view to_string(QueueMode mode) { return mode == QueueMode::kStep ? "step" : "flow"; }

const StepDefinition* FlowDefinition::find(std::string_view step_slug) const {
  for (const StepDefinition& step : steps) {
    if (step.slug == step_slug) return &step;
  }
  return nullptr;
}

nlohmann::ordered_json shape_of(const FlowDefinition& flow) {
  nlohmann::ordered_json steps = nlohmann::ordered_json::array();
  for (const StepDefinition& step : flow.steps) {
    std::vector<std::string> dependencies = step.dependencies;
    std::sort(dependencies.begin(), dependencies.end());  // byte order, like JS sort on ASCII

    nlohmann::ordered_json s;
    s["slug"] = step.slug;
    s["stepType"] = std::string(to_string(step.type));
    s["dependencies"] = dependencies;
    s["whenUnmet"] = std::string(to_string(step.when_unmet));
    s["whenExhausted"] = std::string(to_string(step.when_exhausted));
    s["requiredInputPattern"] = pattern_shape(step.if_pattern);
    s["forbiddenInputPattern"] = pattern_shape(step.if_not_pattern);
    nlohmann::ordered_json options = nlohmann::ordered_json::object();
    put_if_set(options, "maxAttempts", step.options.max_attempts);
    put_if_set(options, "baseDelay", in_seconds(step.options.base_delay));
    put_if_set(options, "timeout", in_seconds(step.options.timeout));
    put_if_set(options, "startDelay", in_seconds(step.options.start_delay));
    if (!options.empty()) s["options"] = std::move(options);
    if (step.wait) s["wait"] = wait_shape(*step.wait);
    steps.push_back(std::move(s));
  }

  nlohmann::ordered_json shape;
  shape["steps"] = std::move(steps);
  nlohmann::ordered_json options = nlohmann::ordered_json::object();
  put_if_set(options, "maxAttempts", flow.options.max_attempts);
  put_if_set(options, "baseDelay", in_seconds(flow.options.base_delay));
  put_if_set(options, "timeout", in_seconds(flow.options.timeout));
  if (!options.empty()) shape["options"] = std::move(options);
  return shape;
}

nlohmann::ordered_json flow_control_of(const FlowDefinition& flow) {
  nlohmann::ordered_json control = nlohmann::ordered_json::object();
  put_if_set(control, "concurrencyLimit", flow.options.concurrency_limit);
  put_key_if_set(control, flow.options.concurrency_key);
  nlohmann::ordered_json steps = nlohmann::ordered_json::object();
  for (const StepDefinition& step : flow.steps) {
    nlohmann::ordered_json options = nlohmann::ordered_json::object();
    put_if_set(options, "concurrencyLimit", step.options.concurrency_limit);
    put_key_if_set(options, step.options.concurrency_key);
    if (!options.empty()) steps[step.slug] = std::move(options);
  }
  if (!steps.empty()) control["steps"] = std::move(steps);
  return control;
}

absl::StatusOr<std::vector<StepRoute>> routes_of(const FlowDefinition& flow) {
  const std::string flow_queue = internal::ascii_lower(flow.slug);
  std::vector<StepRoute> routes;
  routes.reserve(flow.steps.size());
  for (std::size_t i = 0; i < flow.steps.size(); ++i) {
    const std::string& step = flow.steps[i].slug;
    if (flow.queue_mode == QueueMode::kFlow) {
      routes.push_back({step, flow_queue});
      continue;
    }
    switch (detail::step_queue_naming(flow.slug, step, i)) {
      case detail::StepQueueNaming::kReadable:
        routes.push_back({step, absl::StrCat(flow_queue, "__", internal::ascii_lower(step))});
        break;
      case detail::StepQueueNaming::kIndex:
        routes.push_back({step, absl::StrCat(flow_queue, "__", i)});
        break;
      case detail::StepQueueNaming::kTooLong:
        return absl::InvalidArgumentError(absl::StrCat(
            "flow \"", flow.slug, "\" cannot use step queues: the private queue of step \"", step,
            "\" (index ", i, ") would be longer than PGMQ's ", detail::kMaxQueueNameLength,
            " characters even as \"", flow_queue, "__", i, "\"; shorten the flow slug"));
    }
  }
  return routes;
}

absl::Status validate(const FlowDefinition& flow) {
  Problems problems(flow);
  if (const char* error = detail::flow_slug_error(flow.slug)) problems.flow_field("slug", error);
  if (flow.alias) {
    if (const char* error = detail::slug_error(*flow.alias)) problems.flow_field("alias", error);
  }
  check_range(problems, nullptr, "max_attempts", flow.options.max_attempts, 1, "");
  check_range(problems, nullptr, "base_delay", in_seconds(flow.options.base_delay), 1, "second");
  check_range(problems, nullptr, "timeout", in_seconds(flow.options.timeout), 3, "seconds");
  check_range(problems, nullptr, "concurrency_limit", flow.options.concurrency_limit, 1, "");
  bool any_limit = flow.options.concurrency_limit.has_value();
  for (const StepDefinition& step : flow.steps)
    any_limit = any_limit || step.options.concurrency_limit.has_value();
  check_key(problems, nullptr, flow.options.concurrency_key, any_limit);

  for (std::size_t i = 0; i < flow.steps.size(); ++i) {
    const StepDefinition& step = flow.steps[i];
    const std::string* name = &step.slug;
    if (const char* error = detail::slug_error(step.slug))
      problems.step_field(step.slug, "slug", error);
    for (std::size_t j = 0; j < i; ++j) {
      if (flow.steps[j].slug == step.slug) {
        problems.step_field(step.slug, "slug", "another step already has this slug");
      } else if (detail::equal_ignoring_case(flow.steps[j].slug, step.slug)) {
        problems.step_field(
            step.slug, "slug",
            absl::StrCat("differs from step \"", flow.steps[j].slug,
                         "\" only in letter case; slugs must differ in more than case"));
      }
    }

    for (std::size_t d = 0; d < step.dependencies.size(); ++d) {
      const std::string& dep = step.dependencies[d];
      bool earlier = false;
      for (std::size_t j = 0; j < i; ++j) earlier = earlier || flow.steps[j].slug == dep;
      if (!earlier) {
        problems.step_field(step.slug, "dependencies",
                            absl::StrCat("\"", dep, "\" is not a step defined before this one"));
      }
      for (std::size_t e = 0; e < d; ++e) {
        if (step.dependencies[e] == dep) {
          problems.step_field(step.slug, "dependencies",
                              absl::StrCat("\"", dep, "\" is listed twice"));
        }
      }
    }
    if (step.type == StepType::kMap && step.dependencies.size() > 1) {
      problems.step_field(
          step.slug, "dependencies",
          absl::StrCat("a map step has at most one dependency (its source array), got ",
                       step.dependencies.size()));
    }

    if (step.if_pattern.has_value() && !step.if_pattern->is_object()) {
      problems.step_field(
          step.slug, "if_pattern",
          absl::StrCat("must be a JSON object, got ", step.if_pattern->type_name()));
    }
    if (step.if_not_pattern.has_value() && !step.if_not_pattern->is_object()) {
      problems.step_field(
          step.slug, "if_not_pattern",
          absl::StrCat("must be a JSON object, got ", step.if_not_pattern->type_name()));
    }
    // Values the shape's JSON cannot carry as they are (NaN would become null and change the
    // condition; invalid UTF-8 would throw at deployment; NUL is refused by jsonb).
    for (const auto& [field, value] :
         {std::pair{"if_pattern", &step.if_pattern},
          std::pair{"if_not_pattern", &step.if_not_pattern},
          std::pair{"wait.timeout_output", step.wait ? &step.wait->timeout_output : nullptr}}) {
      if (value == nullptr || !value->has_value()) continue;
      if (std::optional<internal::JsonProblem> problem = internal::json_problem(**value)) {
        problems.step_field(step.slug, field, problem->text);
      }
    }

    check_range(problems, name, "max_attempts", step.options.max_attempts, 1, "");
    check_range(problems, name, "base_delay", in_seconds(step.options.base_delay), 1, "second");
    check_range(problems, name, "timeout", in_seconds(step.options.timeout), 3, "seconds");
    check_range(problems, name, "start_delay", in_seconds(step.options.start_delay), 0, "seconds");
    check_range(problems, name, "concurrency_limit", step.options.concurrency_limit, 1, "");
    check_key(problems, name, step.options.concurrency_key,
              step.options.concurrency_limit || flow.options.concurrency_limit);

    if (step.wait) {
      check_wait(problems, step);
    } else if (!step.handler) {
      problems.step_field(step.slug, "handler", "is not set");
    }
  }
  if (flow.queue_mode == QueueMode::kStep) {
    if (flow.steps.empty()) {
      problems.flow_field("queue_mode", "a flow without steps cannot use step queues");
    } else if (absl::StatusOr<std::vector<StepRoute>> routes = routes_of(flow); !routes.ok()) {
      problems.flow_field("queue_mode", std::string(routes.status().message()));
    }
  }
  return problems.status();
}

}  // namespace pgflow
