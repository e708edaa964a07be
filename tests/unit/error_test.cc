#include "pg/error.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "pgflow/status.h"

namespace pgflow::pg {
namespace {

using absl::StatusCode;

TEST(SqlStateMapping, MapsClassesToCanonicalCodes) {
  EXPECT_EQ(code_for_sqlstate(""), StatusCode::kUnavailable);
  EXPECT_EQ(code_for_sqlstate("08006"), StatusCode::kUnavailable);
  EXPECT_EQ(code_for_sqlstate("40001"), StatusCode::kAborted);
  EXPECT_EQ(code_for_sqlstate("40P01"), StatusCode::kAborted);
  EXPECT_EQ(code_for_sqlstate("55P03"), StatusCode::kAborted);
  EXPECT_EQ(code_for_sqlstate("23505"), StatusCode::kAlreadyExists);
  EXPECT_EQ(code_for_sqlstate("23503"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(code_for_sqlstate("23514"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_for_sqlstate("22P02"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_for_sqlstate("53300"), StatusCode::kResourceExhausted);
  EXPECT_EQ(code_for_sqlstate("57014"), StatusCode::kCancelled);
  EXPECT_EQ(code_for_sqlstate("57P01"), StatusCode::kUnavailable);
  EXPECT_EQ(code_for_sqlstate("42501"), StatusCode::kPermissionDenied);
  EXPECT_EQ(code_for_sqlstate("28P01"), StatusCode::kUnauthenticated);
  EXPECT_EQ(code_for_sqlstate("42P01"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(code_for_sqlstate("42883"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(code_for_sqlstate("P0001"), StatusCode::kFailedPrecondition);
  EXPECT_EQ(code_for_sqlstate("P0002"), StatusCode::kNotFound);
  EXPECT_EQ(code_for_sqlstate("3D000"), StatusCode::kNotFound);
  EXPECT_EQ(code_for_sqlstate("0A000"), StatusCode::kUnimplemented);
  EXPECT_EQ(code_for_sqlstate("XX000"), StatusCode::kInternal);
  EXPECT_EQ(code_for_sqlstate("42601"), StatusCode::kInvalidArgument);
  EXPECT_EQ(code_for_sqlstate("HV000"), StatusCode::kUnknown);
}

TEST(SqlStateMapping, KeepsRawSqlStateAsPayload) {
  absl::Status s = database_error("23505", "duplicate key\n");
  EXPECT_EQ(s.code(), StatusCode::kAlreadyExists);
  EXPECT_EQ(s.message(), "duplicate key");
  EXPECT_EQ(sql_state(s), "23505");
  EXPECT_EQ(sql_state(absl::InternalError("x")), std::nullopt);
  EXPECT_EQ(sql_state(absl::OkStatus()), std::nullopt);
}

TEST(SqlStateMapping, MissingSchemaErrorsSayHowToFixIt) {
  absl::Status s = database_error("42883", "function pgflow.start_flow does not exist");
  EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr("pgflow migrate"));
}

TEST(SqlStateMapping, AMissingQueueTableIsNotAMissingSchema) {
  absl::Status s = database_error("42P01", "relation \"pgmq.q_orders\" does not exist");
  EXPECT_EQ(s.code(), StatusCode::kFailedPrecondition);
  EXPECT_THAT(std::string(s.message()),
              ::testing::AllOf(::testing::HasSubstr("a PGMQ queue table is missing"),
                               ::testing::HasSubstr("pgmq.create"),
                               ::testing::Not(::testing::HasSubstr("pgflow migrate"))));
  EXPECT_THAT(
      std::string(database_error("42P01", "relation \"pgmq.a_orders\" does not exist").message()),
      ::testing::HasSubstr("a PGMQ queue table is missing"));
  EXPECT_THAT(
      std::string(database_error("42P01", "relation \"pgflow.flows\" does not exist").message()),
      ::testing::HasSubstr("pgflow migrate"));
}

TEST(SqlStateMapping, TransientErrorsAreRetryable) {
  EXPECT_TRUE(is_transient(database_error("", "connection lost")));
  EXPECT_TRUE(is_transient(database_error("40P01", "deadlock")));
  EXPECT_TRUE(is_transient(database_error("53300", "too many connections")));
  EXPECT_FALSE(is_transient(database_error("23514", "check violation")));
  EXPECT_FALSE(is_transient(database_error("P0001", "raised")));
}

}  // namespace
}  // namespace pgflow::pg
