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
  EXPECT_EQ(code_for_sqlstate("54000"), StatusCode::kInvalidArgument)
      << "a value too big to store or index";
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

// libpq's texts for a failed connection (PostgreSQL 15's fe-connect.c and the server's
// refusals), classified: what libpq rejects itself fails at once, naming the option; refusals
// that retrying cannot fix keep their SQLSTATE; the rest is transient.
TEST(ConnectionFailure, ClassifiesLibpqTextsWithoutEverRetryingABadConnectionString) {
  struct Case {
    const char* libpq_error;
    absl::StatusCode code;
    const char* sqlstate;  // "" when none
    bool transient;
  };
  const Case cases[] = {
      // rejected by libpq before any server is contacted
      {"invalid port number: \"notaport\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid sslmode value: \"bogus\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid gssencmode value: \"maybe\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid channel_binding value: \"x\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid target_session_attrs value: \"x\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid integer value \"soon\" for connection option \"connect_timeout\"",
       absl::StatusCode::kInvalidArgument, "", false},
      {"could not match 2 port numbers to 3 hosts", absl::StatusCode::kInvalidArgument, "", false},
      {"could not parse network address \"300.1.1.1\": Name or service not known",
       absl::StatusCode::kInvalidArgument, "", false},
      {"invalid connection option \"colour\"", absl::StatusCode::kInvalidArgument, "", false},
      {"missing \"=\" after \"hostdb\" in connection info string",
       absl::StatusCode::kInvalidArgument, "", false},
      {"unterminated quoted string in connection info string", absl::StatusCode::kInvalidArgument,
       "", false},
      {"invalid URI query parameter: \"colour\"", absl::StatusCode::kInvalidArgument, "", false},
      {"invalid percent-encoded token: \"%zz\"", absl::StatusCode::kInvalidArgument, "", false},
      // refused by the server, for good
      {"connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password authentication "
       "failed for user \"app\"",
       absl::StatusCode::kUnauthenticated, "28P01", false},
      {"connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: FATAL:  role \"nobody\" does "
       "not exist",
       absl::StatusCode::kUnauthenticated, "28000", false},
      {"connection to server at \"h\" (10.0.0.1), port 5432 failed: FATAL:  database \"nope\" does "
       "not exist",
       absl::StatusCode::kNotFound, "3D000", false},
      // transient: worth waiting for
      {"connection to server at \"127.0.0.1\", port 5432 failed: Connection refused\n\tIs the "
       "server running on "
       "that host and accepting TCP/IP connections?",
       absl::StatusCode::kUnavailable, "08001", true},
      {"connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  the database system is "
       "starting up",
       absl::StatusCode::kUnavailable, "08001", true},
      {"connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  sorry, too many clients "
       "already",
       absl::StatusCode::kUnavailable, "08001", true},
      {"server closed the connection unexpectedly", absl::StatusCode::kUnavailable, "08001", true},
      {"connection to server at \"db\" failed: timeout expired", absl::StatusCode::kUnavailable,
       "08001", true},
      {"could not translate host name \"db.internal\" to address: Name or service not known",
       absl::StatusCode::kUnavailable, "08001", true},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.libpq_error);
    const absl::Status s = connection_failure("host=db user=app password=***", c.libpq_error);
    EXPECT_EQ(s.code(), c.code);
    EXPECT_EQ(sql_state(s).value_or(""), c.sqlstate);
    EXPECT_EQ(is_transient(s), c.transient);
    EXPECT_THAT(std::string(s.message()), ::testing::HasSubstr(c.libpq_error))
        << "the message names the option";
  }
}

}  // namespace
}  // namespace pgflow::pg
