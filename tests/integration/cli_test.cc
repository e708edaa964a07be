// The `pgflow` program against the real embedded PostgreSQL: `pgflow flows` lists every flow's
// queue mode and route with the live workers of each queue (the post-deploy coverage check).
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "testing/command.h"
#include "testing/database_test.h"

namespace pgflow {
namespace {

using ::nlohmann::json;
using ::testing::HasSubstr;
using pgflow::testing::CommandResult;
using pgflow::testing::run_command;
using pgflow::testing::shell_quote;

class CliTest : public pgflow::testing::DatabaseTest {
 protected:
  CommandResult pgflow(const std::string& args) {
    return run_command(absl::StrCat(PGFLOW_CLI_BIN, " ", args, " --database ", shell_quote(db_->url())));
  }
  // One step of a flow shape.
  static std::string step(const std::string& slug, const std::string& deps = "") {
    return absl::StrCat(R"({"slug": ")", slug, R"(", "stepType": "single", "dependencies": [)", deps,
                        R"(], "whenUnmet": "skip", "whenExhausted": "fail",
                            "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}})");
  }
};

TEST_F(CliTest, FlowsListsQueueModesRoutesAndLiveWorkersPerQueue) {
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('orders', '{\"steps\": [", step("pay"), ",",
                   step("ship", "\"pay\""), "]}', pgflow.worker_protocol(), 'step')"));
  sql(absl::StrCat("select pgflow.ensure_flow_compiled('plain', '{\"steps\": [", step("only"),
                   "]}', pgflow.worker_protocol())"));
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', 'orders__pay', "
      "pgflow.worker_protocol())");
  sql("select pgflow.register_worker(gen_random_uuid(), 'orders-pay-worker', 'orders', 'orders__pay', "
      "pgflow.worker_protocol())");
  // A stopped worker and one whose heartbeat is old do not count.
  sql("select pgflow.mark_worker_stopped((pgflow.register_worker(gen_random_uuid(), 'plain-worker', 'plain', "
      "'plain', pgflow.worker_protocol())).worker_id)");
  const std::string old = sql("select worker_id from pgflow.register_worker(gen_random_uuid(), 'plain-worker', "
                              "'plain', 'plain', pgflow.worker_protocol())");
  sql("update pgflow.workers set last_heartbeat_at = now() - interval '1 hour' where worker_id = $1::uuid", {old});

  CommandResult listed = pgflow("flows --json");
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  EXPECT_EQ(json::parse(listed.out), json::parse(R"([
    {"flow_slug": "orders", "queue_mode": "step", "routes": [
      {"step_slug": "pay", "queue_name": "orders__pay", "live_workers": 2},
      {"step_slug": "ship", "queue_name": "orders__ship", "live_workers": 0}]},
    {"flow_slug": "plain", "queue_mode": "flow", "routes": [
      {"step_slug": "only", "queue_name": "plain", "live_workers": 0}]}])"));

  CommandResult table = pgflow("flows");
  ASSERT_EQ(table.exit_code, 0) << table.err;
  EXPECT_THAT(table.out, HasSubstr("FLOW"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("orders +step +pay +orders__pay +2"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("\n +ship +orders__ship +0"));
  EXPECT_THAT(table.out, ::testing::ContainsRegex("plain +flow +only +plain +0"));
}

TEST_F(CliTest, FlowsRefusesAValueForTheJsonSwitch) {
  CommandResult r = pgflow("flows --json=maybe");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--json takes no value"));
}

}  // namespace
}  // namespace pgflow
