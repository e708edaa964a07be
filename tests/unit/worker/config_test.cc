// What the worker refuses in its configuration before touching the database.
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"
#include "testing/status_matchers.h"

namespace pgflow {
namespace {

using pgflow::testing::StatusIs;
using ::testing::HasSubstr;

inline const auto kFlow = Flow<"configChecks", int>().step<"a">([](int x) { return x; });

WorkerConfig offline_config() {
  WorkerConfig config;
  config.connection_string = "postgresql://nobody@127.0.0.1:1/never";  // never reached
  return config;
}

TEST(WorkerConfigChecks, AFunctionNameLongerThan256BytesIsRefusedBeforeTheDatabase) {
  WorkerConfig config = offline_config();
  config.function_name = std::string(257, 'n');
  EXPECT_THAT(EdgeWorker::start(kFlow, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("function_name must be at most 256 bytes, not 257")));
}

TEST(WorkerConfigChecks, PollOnlyWithAListenConnectionIsRefusedBeforeTheDatabase) {
  WorkerConfig config = offline_config();
  config.poll_only = true;
  config.listen_connection_string = "postgresql://nobody@127.0.0.1:2/direct";
  EXPECT_THAT(EdgeWorker::start(kFlow, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("poll_only and listen_connection_string exclude each other")));
}

TEST(WorkerConfigChecks, AConnectionBudgetBelowOnePerRoleNeedsWakeUpsWithoutAPooledListen) {
  WorkerConfig config = offline_config();
  config.max_connections = 2;
  EXPECT_THAT(EdgeWorker::start(kFlow, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("max_connections 2 shares connections between the worker's "
                                 "roles, but the poller and the heartbeat LISTEN on theirs")));
  config.max_connections = 0;
  EXPECT_THAT(
      EdgeWorker::start(kFlow, config),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_connections must be 1..4")));
}

TEST(WorkerConfigChecks, AVisibilityTimeoutBeyondPgmqsIntIsRefused) {
  WorkerConfig config = offline_config();
  config.visibility_timeout = std::chrono::seconds::max();
  EXPECT_THAT(EdgeWorker::start(kFlow, config),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("visibility_timeout must be at most 2147483647 seconds")));
}

}  // namespace
}  // namespace pgflow
