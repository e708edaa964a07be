// flows, flow show, aliases, activate: flow definitions and the aliases that start them.
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "cli/cli.h"
#include "cli/output.h"
#include "cli/statements.h"

namespace pgflow::cli {
namespace {

int list_flows(const Globals& g) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> flows = query_json(*conn, kFlowsQuery);
  if (!flows.ok()) return fail(flows.status());
  if (g.json) {
    print_json(*flows);
    return kOk;
  }
  Table summary({"FLOW", "ALIAS", "STATE", "MODE", "STEPS", "RUNS STARTED", "COMPLETED", "FAILED"});
  Table routes({"FLOW", "STEP", "QUEUE", "LIVE WORKERS"});
  for (const auto& f : *flows) {
    summary.add_row({f["flow_slug"], f["flow_alias"],
                     f["active"].get<bool>() ? "active" : "inactive", f["queue_mode"],
                     display_text(f["step_count"]), display_text(f["runs"]["started"]),
                     display_text(f["runs"]["completed"]), display_text(f["runs"]["failed"])});
    for (const auto& r : f["routes"]) {
      routes.add_row(
          {f["flow_slug"], r["step_slug"], r["queue_name"], display_text(r["live_workers"])});
    }
  }
  summary.print();
  if (!routes.empty()) {
    std::printf("\nroutes (a step whose queue has 0 live workers waits):\n");
    routes.print();
  }
  return kOk;
}

// What a step does differently from the defaults, as one line.
std::string step_details(const nlohmann::json& s, const nlohmann::json& flow_options) {
  std::vector<std::string> parts = {s["step_type"].get<std::string>() + " step",
                                    "queue " + display_text(s["queue_name"])};
  for (const char* option : {"max_attempts", "base_delay", "timeout", "start_delay"}) {
    const nlohmann::json& v = s["options"][option];
    if (!v.is_null() && (!flow_options.contains(option) || v != flow_options[option])) {
      parts.push_back(
          absl::StrCat(option, " ", v.dump(), std::string(option) == "max_attempts" ? "" : " s"));
    }
  }
  if (!s["required_input_pattern"].is_null())
    parts.push_back("if input contains " + json_text(s["required_input_pattern"]));
  if (!s["forbidden_input_pattern"].is_null()) {
    parts.push_back("unless input contains " + json_text(s["forbidden_input_pattern"]));
  }
  if (!s["required_input_pattern"].is_null() || !s["forbidden_input_pattern"].is_null()) {
    parts.push_back("when unmet: " + display_text(s["when_unmet"]));
  }
  if (s["when_exhausted"] != "fail")
    parts.push_back("when retries are exhausted: " + display_text(s["when_exhausted"]));
  return absl::StrJoin(parts, "; ");
}

// The steps as a tree: each step under its last dependency (in step order), with the other
// dependencies named; roots at the top.
void print_step_tree(const nlohmann::json& flow) {
  std::map<std::string, std::vector<const nlohmann::json*>> children;
  std::vector<const nlohmann::json*> roots;
  for (const auto& s : flow["steps"]) {
    if (s["dependencies"].empty()) {
      roots.push_back(&s);
    } else {
      children[s["dependencies"].back().get<std::string>()].push_back(&s);
    }
  }
  auto print = [&](auto& self, const nlohmann::json& s, const std::string& prefix, bool last,
                   bool root) -> void {
    std::string line = root ? "" : prefix + (last ? "└─ " : "├─ ");
    line += s["step_slug"].get<std::string>();
    if (s["dependencies"].size() > 1) {
      std::vector<std::string> deps;
      for (const auto& d : s["dependencies"]) deps.push_back(d);
      line += " (after " + absl::StrJoin(deps, ", ") + ")";
    }
    std::printf("  %s  [%s]\n", line.c_str(), step_details(s, flow["options"]).c_str());
    const auto& kids = children[s["step_slug"].get<std::string>()];
    const std::string next_prefix = root ? "" : prefix + (last ? "   " : "│  ");
    for (size_t i = 0; i < kids.size(); ++i)
      self(self, *kids[i], next_prefix, i + 1 == kids.size(), false);
  };
  for (const nlohmann::json* r : roots) print(print, *r, "", true, true);
}

int show_flow(const Globals& g, const std::string& slug) {
  absl::StatusOr<pg::Connection> conn = open_pgflow(g);
  if (!conn.ok()) return fail(conn.status());
  absl::StatusOr<nlohmann::json> flow = query_json(*conn, kFlowQuery, {slug});
  if (!flow.ok()) return fail(flow.status());
  if (flow->is_null())
    return fail(absl::NotFoundError(absl::StrCat("no flow or alias \"", slug, "\"")));
  if (g.json) {
    print_json(*flow);
    return kOk;
  }
  const auto& f = *flow;
  std::printf("flow %s  (alias %s, %s; one queue per %s)\n", display_text(f["flow_slug"]).c_str(),
              display_text(f["flow_alias"]).c_str(),
              f["active"].get<bool>() ? "active version" : "inactive version",
              f["queue_mode"] == "step" ? "step" : "flow");
  std::printf("defaults: max_attempts %s, base_delay %s s, timeout %s s; defined %s\n",
              display_text(f["options"]["max_attempts"]).c_str(),
              display_text(f["options"]["base_delay"]).c_str(),
              display_text(f["options"]["timeout"]).c_str(),
              timestamp_text(f["created_at"]).c_str());
  std::printf("steps:\n");
  print_step_tree(f);
  return kOk;
}

int list_aliases(const Globals& g) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<std::vector<FlowAlias>> aliases = client->flow_aliases();
  if (!aliases.ok()) return fail(aliases.status());
  if (g.json) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& a : *aliases) {
      out.push_back(
          {{"alias", a.alias},
           {"active_flow_slug", a.active_flow_slug ? nlohmann::json(*a.active_flow_slug) : nullptr},
           {"versions", a.versions},
           {"updated_at", a.updated_at ? nlohmann::json(rfc3339(*a.updated_at)) : nullptr}});
    }
    print_json(out);
    return kOk;
  }
  Table table({"ALIAS", "ACTIVE", "VERSIONS"});
  for (const auto& a : *aliases) {
    table.add_row(
        {a.alias, a.active_flow_slug.value_or("(none)"), absl::StrJoin(a.versions, ", ")});
  }
  table.print();
  return kOk;
}

struct ActivateOptions {
  std::string alias, slug;
  std::optional<std::string> expected;
  bool expected_none = false;
};

int activate(const Globals& g, const ActivateOptions& o) {
  absl::StatusOr<Client> client = connect_client(g);
  if (!client.ok()) return fail(client.status());
  absl::StatusOr<FlowAlias> activated =
      client->activate_flow_version(o.alias, o.slug, o.expected_none ? std::nullopt : o.expected);
  if (!activated.ok()) return fail(activated.status());
  if (g.json) {
    print_json({{"alias", activated->alias},
                {"active_flow_slug", activated->active_flow_slug.value_or("")},
                {"previous_flow_slug", o.expected ? nlohmann::json(*o.expected) : nullptr}});
    return kOk;
  }
  std::printf("alias %s now starts %s (was %s)\n", activated->alias.c_str(),
              activated->active_flow_slug.value_or("(none)").c_str(),
              o.expected_none ? "no version" : o.expected->c_str());
  return kOk;
}

}  // namespace

void add_flow_commands(CommandSet& commands) {
  CLI::App& app = commands.app();
  commands.add(
      &app, "flows",
      "each flow: alias, active or not, queue mode, steps, runs by status, and its route (the "
      "queue of every step and the live workers serving it)",
      list_flows);

  CLI::App* flow = commands.group("flow", "one flow's definition");
  auto slug = std::make_shared<std::string>();
  CLI::App* show = commands.add(
      flow, "show", "a flow's steps as a tree: dependencies, options, conditions, queues",
      [slug](const Globals& g) { return show_flow(g, *slug); });
  show->add_option("SLUG", *slug, "flow slug, or an alias (shows its active version)")
      ->required()
      ->check(slug_check());

  commands.add(&app, "aliases",
               "each alias: its active version (what start starts) and its versions", list_aliases);

  auto o = std::make_shared<ActivateOptions>();
  CLI::App* activate_command =
      commands.add(&app, "activate",
                   "make SLUG the active version of ALIAS if ALIAS still points to --expected "
                   "(compare-and-swap: "
                   "on a conflict nothing changes and the actual version is named)",
                   [o](const Globals& g) { return activate(g, *o); });
  activate_command->add_option("ALIAS", o->alias, "the alias")->required()->check(slug_check());
  activate_command->add_option("SLUG", o->slug, "the version (flow slug) to activate")
      ->required()
      ->check(slug_check());
  CLI::Option* expected = activate_command->add_option("--expected", o->expected,
                                                       "the version the alias points to now");
  CLI::Option* none = activate_command->add_flag("--expected-none", o->expected_none,
                                                 "the alias has no active version yet");
  expected->excludes(none);
  activate_command->callback([o] {
    // The values, not the counts: `--expected-none=false` is given, and says nothing.
    if (!o->expected && !o->expected_none) {
      throw CLI::ValidationError(
          "--expected",
          "activate needs --expected CURRENT (the version the alias points to now) or "
          "--expected-none (it has no active version yet)");
    }
  });
}

}  // namespace pgflow::cli
