// A producer that records an order in its own table and starts the processOrder run in the
// SAME transaction: either both exist or neither does. It includes the flow's signature only
// (flows/orders_signature.h): it compiles no handler and links none (ctest checks its symbols).
//
//   producer [--wait]    (DATABASE_URL must be set; a worker_main must be running to finish runs)
#include <cstdio>
#include <cstdlib>
#include <string>

#include "flows/orders_signature.h"
#include "pgflow/client.h"

int main(int argc, char** argv) {
  const bool wait = argc > 1 && std::string(argv[1]) == "--wait";
  absl::StatusOr<pgflow::Client> client = pgflow::Client::connect();  // DATABASE_URL
  if (!client.ok()) {
    std::fprintf(stderr, "producer: %s\n", std::string(client.status().message()).c_str());
    return 1;
  }
  std::string run_id;
  absl::Status s = client->in_transaction([&](pgflow::Transaction& tx) -> absl::Status {
    absl::StatusOr<pgflow::Rows> made = tx.exec(
        "create table if not exists shop_orders (id bigserial primary key, customer text not null, "
        "created_at timestamptz not null default now())");
    if (!made.ok()) return made.status();
    absl::StatusOr<pgflow::Rows> row =
        tx.exec("insert into shop_orders (customer) values ($1) returning id", {"ada"});
    if (!row.ok()) return row.status();
    orders::Order order{std::stoll(*(*row)[0][0]), {{"book", 2}, {"lamp", 1}}};
    absl::StatusOr<pgflow::RunState> run = tx.start_flow(orders::Signature{}, order);
    if (!run.ok()) return run.status();
    run_id = run->run_id;
    return absl::OkStatus();
  });
  if (!s.ok()) {
    std::fprintf(stderr, "producer: %s\n", std::string(s.message()).c_str());
    return 1;
  }
  std::printf("started run %s\n", run_id.c_str());
  if (!wait) return 0;
  absl::StatusOr<pgflow::RunState> done = client->wait_for_run(run_id, std::chrono::seconds(60));
  if (!done.ok()) {
    std::fprintf(stderr, "producer: %s\n", std::string(done.status().message()).c_str());
    return 1;
  }
  absl::StatusOr<pgflow::FlowOutput<orders::Signature>> out =
      done->output_as<pgflow::FlowOutput<orders::Signature>>();
  std::printf("run %s %s: %s\n", run_id.c_str(),
              std::string(pgflow::to_string(done->status)).c_str(),
              out.ok() ? out->get<"confirm">().c_str() : "no output");
  return done->status == pgflow::RunStatus::kCompleted ? 0 : 1;
}
