// The libpq layer: one RAII connection, parameterised statements, typed results and
// LISTEN/NOTIFY. This is the only part of pgflow that includes <libpq-fe.h>. A Connection
// belongs to one thread at a time; it is never shared.
#ifndef PGFLOW_PG_CONNECTION_H_
#define PGFLOW_PG_CONNECTION_H_

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;

namespace pgflow::pg {

// A statement parameter in text form; nullopt is SQL NULL. SQL casts the text
// ($1::bigint[], $2::jsonb), so values never become part of the statement text.
using Param = std::optional<std::string>;

// The rows of one statement. Column access is by index; look indexes up once by name.
class Result {
 public:
  Result() = default;
  explicit Result(PGresult* result);

  int rows() const;
  int columns() const;
  // The index of the column called `name`, or -1.
  int column(std::string_view name) const;
  bool is_null(int row, int col) const;
  // The text of a value ("" for NULL); valid while this Result lives.
  std::string_view text(int row, int col) const;
  absl::StatusOr<std::int64_t> int64(int row, int col) const;
  absl::StatusOr<bool> boolean(int row, int col) const;
  // The value of the first column of the first row (a convenience for scalar queries).
  std::string_view scalar() const { return text(0, 0); }

 private:
  struct Clear {
    void operator()(PGresult* r) const;
  };
  std::unique_ptr<PGresult, Clear> result_;
};

// One asynchronous notification received on a LISTEN channel.
struct Notification {
  std::string channel;
  std::string payload;
  int sender_pid = 0;
};

class Connection {
 public:
  // Connects with a libpq connection string or URL. Errors never include the password.
  static absl::StatusOr<Connection> open(std::string_view conninfo,
                                         std::string_view application_name = "pgflow");

  Connection(Connection&&) noexcept;
  Connection& operator=(Connection&&) noexcept;
  ~Connection();

  // Runs one statement with text parameters.
  absl::StatusOr<Result> exec(std::string_view sql, const std::vector<Param>& params = {});

  // Runs a script of several statements without parameters (migration files). Values must
  // never be spliced into `sql`; use exec() for anything that carries data.
  absl::Status exec_script(std::string_view sql);

  // LISTEN on `channel` (quoted as an identifier).
  absl::Status listen(std::string_view channel);

  // Waits until a notification arrives, `deadline` passes or `stop` is requested. Returns the
  // notification, or nullopt on timeout or stop. Notifications that arrived earlier (during
  // exec) are returned first.
  absl::StatusOr<std::optional<Notification>> wait_notification(
      std::chrono::steady_clock::time_point deadline, std::stop_token stop = {});

  // False once the connection is known to be broken.
  bool healthy() const;
  // True when healthy and outside any transaction (safe to hand to another user).
  bool idle() const;
  // True inside a transaction that an error aborted (COMMIT would roll it back).
  bool failed_transaction() const;
  int backend_pid() const;

 private:
  explicit Connection(PGconn* conn);
  std::optional<Notification> take_notification();

  PGconn* conn_ = nullptr;
};

// Where the database is: `configured` when set, else the DATABASE_URL environment variable;
// nullopt when neither is (every entry point's default, in one place).
std::optional<std::string> connection_string_or_env(std::string_view configured);
// What every entry point says when there is neither: "no database: <setting> is empty and
// DATABASE_URL is not set" (`setting`: connection_string, --database).
std::string no_database(std::string_view setting);

// What every entry point says about a database without pgflow's schema.
inline constexpr char kNoPgflowSchema[] =
    "the database has no pgflow schema: run `pgflow migrate` to install it";
// kFailedPrecondition (kNoPgflowSchema) unless the database has pgflow's schema.
absl::Status require_pgflow_schema(Connection& conn);

// Runs `body` in one transaction on `conn`: commits when it returns OK, otherwise rolls back
// and returns its status. A body that ignored a failed statement gets kAborted, not a silent
// rollback (COMMIT of an aborted transaction rolls back without an error).
absl::Status in_transaction(Connection& conn, absl::FunctionRef<absl::Status()> body);

// A description of a connection string for logs and errors: host, port, database and user,
// never the password.
std::string describe_conninfo(std::string_view conninfo);

// Quotes an identifier for SQL text (for names that cannot be parameters, such as a LISTEN
// channel or a database name in CREATE DATABASE).
std::string quote_identifier(std::string_view name);

}  // namespace pgflow::pg

#endif  // PGFLOW_PG_CONNECTION_H_
