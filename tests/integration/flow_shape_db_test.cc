// The flow shapes of typed flows against the SQL core: ensure_flow_compiled creates each flow
// from our shape, and _get_flow_shape reads back exactly our shape without "options" (the
// database never reports options; they are tunable at run time). A second call verifies.
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "pg/connection.h"
#include "pgflow/flow.h"
#include "testing/pg_fixture.h"
#include "testing/status_matchers.h"
#include "testing/test_flows.h"

namespace pgflow {
namespace {

using ::pgflow::testing::IsOk;
using ::pgflow::testing::TestDatabase;
namespace flows = pgflow::testing::flows;

// Our shape as the database should store it: no "options" anywhere.
nlohmann::json without_options(nlohmann::ordered_json shape) {
  shape.erase("options");
  for (auto& step : shape["steps"]) step.erase("options");
  return nlohmann::json::parse(shape.dump());
}

absl::StatusOr<nlohmann::json> query_json(pg::Connection& conn, const std::string& sql,
                                          const std::vector<pg::Param>& params) {
  absl::StatusOr<pg::Result> result = conn.exec(sql, params);
  if (!result.ok()) return result.status();
  if (result->rows() != 1 || result->is_null(0, 0))
    return absl::InternalError("expected one non-null value");
  return nlohmann::json::parse(std::string(result->scalar()));
}

void expect_round_trip(const FlowDefinition& def) {
  SCOPED_TRACE("flow " + def.slug);
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::from_template());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  const std::string shape = shape_of(def).dump();

  PGFLOW_ASSERT_OK_AND_ASSIGN(
      nlohmann::json compiled,
      query_json(conn,
                 "select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())",
                 {def.slug, shape}));
  EXPECT_EQ(compiled["status"], "compiled") << compiled.dump();
  EXPECT_EQ(compiled["differences"], nlohmann::json::array()) << compiled.dump();

  PGFLOW_ASSERT_OK_AND_ASSIGN(nlohmann::json stored,
                              query_json(conn, "select pgflow._get_flow_shape($1)", {def.slug}));
  EXPECT_EQ(stored, without_options(shape_of(def)))
      << "stored: " << stored.dump() << "\nours:   " << shape;

  PGFLOW_ASSERT_OK_AND_ASSIGN(
      nlohmann::json again,
      query_json(conn,
                 "select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())",
                 {def.slug, shape}));
  EXPECT_EQ(again["status"], "verified") << again.dump();
}

TEST(FlowShapeDb, ArchitectureSketch) { expect_round_trip(flows::onboarding.definition()); }
TEST(FlowShapeDb, RootAndDependentMaps) { expect_round_trip(flows::maps.definition()); }
TEST(FlowShapeDb, ConditionsAndModes) { expect_round_trip(flows::conditions.definition()); }
TEST(FlowShapeDb, Options) { expect_round_trip(flows::options.definition()); }
// Mixed-case dependencies: the database must sort them by byte order, as the shape does
// (JavaScript's sort), whatever the database collation.
TEST(FlowShapeDb, MixedCaseDependencies) { expect_round_trip(flows::sorted_deps.definition()); }
TEST(FlowShapeDb, EmptyFlow) { expect_round_trip(flows::empty.definition()); }

TEST(FlowShapeDb, OptionsAreAppliedAtCreation) {
  PGFLOW_ASSERT_OK_AND_ASSIGN(TestDatabase db, TestDatabase::from_template());
  PGFLOW_ASSERT_OK_AND_ASSIGN(pg::Connection conn, pg::Connection::open(db.url()));
  const FlowDefinition& def = flows::options.definition();
  ASSERT_THAT(
      conn.exec("select pgflow.ensure_flow_compiled($1, $2::jsonb, pgflow.worker_protocol())",
                {def.slug, shape_of(def).dump()})
          .status(),
      IsOk());
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      nlohmann::json flow,
      query_json(conn,
                 "select jsonb_build_object('max_attempts', opt_max_attempts, 'base_delay', "
                 "opt_base_delay, "
                 "'timeout', opt_timeout) from pgflow.flows where flow_slug = $1",
                 {def.slug}));
  EXPECT_EQ(flow, (nlohmann::json{{"max_attempts", 4}, {"base_delay", 2}, {"timeout", 90}}));
  PGFLOW_ASSERT_OK_AND_ASSIGN(
      nlohmann::json slow,
      query_json(
          conn,
          "select jsonb_build_object('max_attempts', opt_max_attempts, 'timeout', opt_timeout, "
          "'start_delay', opt_start_delay) from pgflow.steps where flow_slug = $1 and step_slug = "
          "'slow'",
          {def.slug}));
  EXPECT_EQ(slow,
            (nlohmann::json{{"max_attempts", nullptr}, {"timeout", 600}, {"start_delay", 30}}));
}

}  // namespace
}  // namespace pgflow
