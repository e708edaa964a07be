// StepQueuedFlow and routes, without a database: with_step_queues keeps the wrapped flow's
// types and shape and only changes the queue mode; routes_of derives the queue names the SQL
// core derives (the shared table tests/data/step_queue_names.tsv); validate() and
// EdgeWorker::start check step selection before anything touches a database.
#include "pgflow/step_queued_flow.h"

#include <fstream>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/flow.h"
#include "pgflow/worker.h"
#include "testing/status_matchers.h"

#ifndef PGFLOW_STEP_QUEUE_NAMES_TSV
#error "PGFLOW_STEP_QUEUE_NAMES_TSV must name tests/data/step_queue_names.tsv"
#endif

namespace pgflow {
namespace {

using pgflow::testing::IsOk;
using pgflow::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::Field;
using ::testing::HasSubstr;

struct Order {
  int id = 0;
  bool express = false;
};
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Order, id, express)

inline const auto plain =
    Flow<"orderFlow", Order>({.max_attempts = 2})
        .array<"validate">([](const Order& o) { return std::vector<int>{o.id}; })
        .map<"ship">(over<"validate">, [](int) { return true; })
        .step<"notify">(after<"validate">, when_exhausted_skip,
                        [](const std::vector<int>& ids) { return std::to_string(ids.size()); })
        .step<"report">(after<"ship", "notify">,
                        [](const std::vector<bool>& shipped, std::optional<std::string> note) {
                          return static_cast<int>(shipped.size()) + (note ? 1 : 0);
                        });
inline const auto routed = with_step_queues(plain);

using Plain = std::remove_cvref_t<decltype(plain)>;
using Routed = std::remove_cvref_t<decltype(routed)>;

// Every inference of the wrapped flow holds for the wrapper, exactly.
static_assert(std::is_same_v<Routed::flow_type, Plain>);
static_assert(std::is_same_v<FlowInput<Routed>, Order>);
static_assert(std::is_same_v<FlowOutput<Routed>, FlowOutput<Plain>>);
static_assert(std::is_same_v<StepOutput<Routed, "ship">, std::vector<bool>>);
static_assert(std::is_same_v<StepOutput<Routed, "notify">, StepOutput<Plain, "notify">>);
static_assert(step_slugs<Routed> == step_slugs<Plain>);
static_assert(Routed::has_step<"report"> && !Routed::has_step<"nope">);
static_assert(Routed::queue_mode == QueueMode::kStep && Plain::queue_mode == QueueMode::kFlow);
static_assert(TypedFlow<Routed> && TypedFlow<Plain>);

TEST(StepQueuedFlowTest, KeepsTheShapeAndOnlyChangesTheQueueMode) {
  EXPECT_EQ(shape_of(routed), shape_of(plain));
  EXPECT_EQ(routed.definition().queue_mode, QueueMode::kStep);
  EXPECT_EQ(plain.definition().queue_mode, QueueMode::kFlow);
  EXPECT_EQ(routed.definition().slug, "orderFlow");
  ASSERT_EQ(routed.definition().steps.size(), 4u);
  EXPECT_TRUE(routed.definition().steps[3].handler) << "handlers come along";
  EXPECT_EQ(&routed.flow().definition(), &plain.definition())
      << "the wrapped flow is kept as it was";
  EXPECT_EQ(to_string(QueueMode::kStep), "step");
  EXPECT_EQ(to_string(QueueMode::kFlow), "flow");
}

TEST(StepQueuedFlowTest, RoutesGiveEachStepItsOwnQueue) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::vector<StepRoute> routes, routes_of(routed.definition()));
  EXPECT_THAT(routes, ElementsAre(AllOf(Field(&StepRoute::step_slug, "validate"),
                                        Field(&StepRoute::queue_name, "orderflow__validate")),
                                  Field(&StepRoute::queue_name, "orderflow__ship"),
                                  Field(&StepRoute::queue_name, "orderflow__notify"),
                                  Field(&StepRoute::queue_name, "orderflow__report")));
  PGFLOW_ASSERT_OK_AND_ASSIGN(std::vector<StepRoute> plain_routes, routes_of(plain.definition()));
  for (const StepRoute& r : plain_routes) EXPECT_EQ(r.queue_name, "orderflow") << r.step_slug;
}

// One step `slug` at position `index` of flow `flow` (the steps before it are placeholders).
FlowDefinition definition_with_step(const std::string& flow, const std::string& slug, int index) {
  FlowDefinition def;
  def.slug = flow;
  def.queue_mode = QueueMode::kStep;
  for (int i = 0; i < index; ++i) def.steps.push_back({.slug = absl::StrCat("s", i)});
  def.steps.push_back({.slug = slug});
  return def;
}

TEST(StepQueuedFlowTest, RoutesFollowTheCaseTableSharedWithSql) {
  std::ifstream in(PGFLOW_STEP_QUEUE_NAMES_TSV);
  ASSERT_TRUE(in.good()) << "cannot open " << PGFLOW_STEP_QUEUE_NAMES_TSV;
  std::string line;
  ASSERT_TRUE(std::getline(in, line));
  EXPECT_EQ(line, "flow_slug\tstep_slug\tstep_index\tqueue_name\treason");
  int cases = 0, rejected = 0;
  while (std::getline(in, line)) {
    const std::vector<std::string> f = absl::StrSplit(line, '\t');
    ASSERT_EQ(f.size(), 5u) << line;
    const FlowDefinition def = definition_with_step(f[0], f[1], std::stoi(f[2]));
    absl::StatusOr<std::vector<StepRoute>> routes = routes_of(def);
    if (f[3].empty()) {
      ++rejected;
      EXPECT_THAT(routes.status(),
                  StatusIs(absl::StatusCode::kInvalidArgument,
                           AllOf(HasSubstr(f[0]), HasSubstr(f[1]), HasSubstr("47"))))
          << f[4];
      EXPECT_THAT(validate(def), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("cannot use step queues")));
    } else {
      ASSERT_THAT(routes, IsOk()) << f[4];
      EXPECT_EQ(routes->back().queue_name, f[3]) << f[4];
    }
    ++cases;
  }
  EXPECT_GE(cases, 8);
  EXPECT_GE(rejected, 1);
}

TEST(StepQueuedFlowTest, ValidateRefusesAStepQueuedDefinitionWithoutSteps) {
  FlowDefinition def;
  def.slug = "empty";
  def.queue_mode = QueueMode::kStep;
  EXPECT_THAT(validate(def), StatusIs(absl::StatusCode::kInvalidArgument,
                                      HasSubstr("a flow without steps cannot use step queues")));
}

// ---- step selection, checked before any database is touched --------------------------------

WorkerConfig offline_config() {
  WorkerConfig config;
  config.connection_string = "postgresql://nobody@127.0.0.1:1/never";  // never reached
  return config;
}

TEST(StepWorkerConfigTest, AStepQueuedFlowNeedsAStepAndSaysHow) {
  auto worker = EdgeWorker::start(routed, offline_config());
  EXPECT_THAT(worker.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("one queue per step"), HasSubstr("only_step"),
                             HasSubstr("WorkerConfig::step"),
                             HasSubstr("validate, ship, notify, report"))));
}

TEST(StepWorkerConfigTest, AWorkerThatDoesNotStartLogsWhyAsWellAsReturningIt) {
  std::vector<std::string> errors;  // (start is synchronous: the sink runs on this thread)
  WorkerConfig config = offline_config();
  config.log_sink = [&](const LogRecord& r) {
    if (r.level != LogLevel::kError) return;
    std::string line(r.message);
    for (const LogField& f : r.fields) absl::StrAppend(&line, " ", f.key, "=", f.value);
    errors.push_back(line);
  };
  auto worker = EdgeWorker::start(routed, config);
  ASSERT_FALSE(worker.ok());
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_THAT(errors[0], AllOf(HasSubstr("worker did not start"), HasSubstr("flow=orderFlow"),
                               HasSubstr(std::string(worker.status().message()))));
}

TEST(StepWorkerConfigTest, AnUnknownStepIsRefusedNamingTheValidOnes) {
  WorkerConfig config = offline_config();
  config.step = "shipping";
  auto worker = EdgeWorker::start(routed, config);
  EXPECT_THAT(worker.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("step \"shipping\" is not a step of flow \"orderFlow\""),
                             HasSubstr("validate, ship, notify, report"))));
}

TEST(StepWorkerConfigTest, APlainFlowRefusesAStep) {
  WorkerConfig config = offline_config();
  config.step = "ship";
  auto worker = EdgeWorker::start(plain, config);
  EXPECT_THAT(worker.status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                        AllOf(HasSubstr("one queue for all its steps"),
                                              HasSubstr("with_step_queues"))));
}

TEST(StepWorkerConfigTest, OnlyStepAndADifferentConfigStepConflict) {
  WorkerConfig config = offline_config();
  config.step = "notify";
  auto worker = EdgeWorker::start(routed, only_step<"ship">, config);
  EXPECT_THAT(worker.status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("step is \"notify\" but only_step selects \"ship\"")));
}

}  // namespace
}  // namespace pgflow
