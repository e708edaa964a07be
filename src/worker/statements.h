// The worker's SQL: every statement PgStore sends, as named constants. Which database calls
// a worker makes, and why, in one place (the rest of the worker speaks to a Store).
#ifndef PGFLOW_WORKER_STATEMENTS_H_
#define PGFLOW_WORKER_STATEMENTS_H_

namespace pgflow::internal {

// The isolation level, read outside a transaction block, is the one the worker's transactions
// get (default_transaction_isolation).
inline constexpr char kHandshakeQuery[] =
    "select pgflow.worker_protocol(), current_setting('transaction_isolation')";

// One transaction, under the alias lock then the flow's: membership, compilation, activation of
// an alias without an active version (seed 004).
inline constexpr char kEnsureFlowCompiled[] =
    "select pgflow.ensure_flow_compiled($1, $2::jsonb, $3::int, $4, $5::jsonb, $6)::text";
// The same with flow-control options (schema 0018 or later).
inline constexpr char kEnsureFlowCompiledWithFlowControl[] =
    "select pgflow.ensure_flow_compiled($1, $2::jsonb, $3::int, $4, $5::jsonb, $6, "
    "$7::jsonb)::text";
// Whether the schema knows concurrency keys (0019): asked after a refused deployment with keys.
// The catalogs are readable by any role.
inline constexpr char kSchemaHasConcurrencyKeys[] =
    "select exists (select 1 from pg_catalog.pg_proc p join pg_catalog.pg_namespace n "
    "on n.oid = p.pronamespace where n.nspname = 'pgflow' and p.proname = "
    "'_checked_concurrency_key')";

inline constexpr char kRegisterWorker[] =
    "select worker_id from pgflow.register_worker($1::uuid, $2, $3, $4, $5::int)";
// Whether this worker is registered already (by an attempt whose reply was lost).
inline constexpr char kOwnRegistration[] =
    "select count(*) from pgflow.workers where worker_id = $1::uuid and function_name = $2";

// Reads up to $4 messages and claims them in one round trip ($6: the step of a step worker,
// else NULL; $7: this call's claim id). The read and the claim commit together, so a failed
// claim leaves the messages visible.
inline constexpr char kReadAndClaim[] = R"sql(
select c.outcome, c.msg_id::text, c.run_id::text, c.step_slug, c.task_index, c.attempt,
       c.input::text, c.flow_input::text, c.reason, c.timeout
from pgflow.claim_tasks($1, $2,
                        array(select m.msg_id from pgmq.read($1, $3::int, $4::int) m),
                        $5::uuid, $6, $7::uuid) c
)sql";
// Whether the worker's queue holds a visible message (schema 0020): a poll-only worker looks
// before it claims while its queue is idle; one index probe, where an empty read-and-claim
// plans the read and checks the subscription.
inline constexpr char kHasVisibleWork[] = "select pgflow.has_visible_work($1::uuid)";
// Gives back the tasks a claim started if its reply never arrived (worker protocol 6); waits
// for a claim still running at most $3 (lock_timeout, for this statement's transaction only).
inline constexpr char kReleaseClaim[] =
    "select pgflow.release_claim($1::uuid, $2::uuid) "
    "from (select set_config('lock_timeout', $3, true) as wait) bounded where wait is not null";

// One call per batch (worker protocol 5). The database locks the batch's runs in run_id order,
// so concurrent reporters cannot deadlock, and applies each result as complete_task /
// fail_task would one by one.
inline constexpr char kCompleteBatch[] =
    "select t.step_slug, t.status from pgflow.complete_tasks($1::jsonb) t";
inline constexpr char kFailBatch[] =
    "select t.step_slug, t.status from pgflow.fail_tasks($1::jsonb) t";

// Maintenance commits without waiting for its WAL to be flushed (synchronous_commit off for its
// own transaction): a heartbeat or a recovery pass lost in a crash is made again at the next
// interval, and the flush (an fdatasync per commit) was most of an idle worker's server CPU.
inline constexpr char kHeartbeat[] =
    "select pgflow.worker_heartbeat($1::uuid) "
    "from (select pg_catalog.set_config('synchronous_commit', 'off', true)) as async_commit";
// The pause of the worker's function, read after each heartbeat so that a worker whose function
// was paused (by an operator, or by a fatal claim whose reply it never saw) says so in its log.
// A statement of its own: a role that may not read the tables loses only this, not the beat.
inline constexpr char kPauseReason[] =
    "select f.pause_reason from pgflow.workers w "
    "join pgflow.worker_functions f on f.function_name = w.function_name "
    "where w.worker_id = $1::uuid";
// One stall recovery offer: a pass (schema 0012; NULL when another session's pass holds the
// lock), unless a pass completed within $1 (an interval), then 0 after a plain read. A fleet
// thus runs about one pass per $1, not one per worker: a pass writes pgflow.locks and sweeps
// limited flows (its server CPU on an idle database is small: bench/README.md, p6).
inline constexpr char kRecoverStalledTasks[] = R"sql(
select case when l.last_completed_at > pg_catalog.clock_timestamp() - $1::interval then 0
            else pgflow.requeue_stalled_tasks() end
from (select pg_catalog.set_config('synchronous_commit', 'off', true)) as async_commit
left join pgflow.locks l on l.lock_name = 'stall_recovery'
)sql";
// The timers of wait steps (schema 0021): ends the waiting tasks that are due; how many.
inline constexpr char kWakeWaitingTasks[] = "select pgflow.wake_waiting_tasks($1::int)";
// Who holds the stall recovery lock and has held it for at least $1 (an interval).
inline constexpr char kStallRecoveryHolders[] = R"sql(
select pgflow._lock_holders(l.xmax, 'pgflow.locks', now() - $1::interval)
from pgflow.locks l where l.lock_name = 'stall_recovery'
)sql";
// Which of the tasks this worker runs ($1: [{"id", "run_id", "step_slug", "task_index"}]) the
// database no longer wants from it: cancelled or skipped, finished, claimed again by another
// worker, or gone.
inline constexpr char kUnwantedTasks[] = R"sql(
select k.id
from jsonb_to_recordset($1::jsonb) as k(id bigint, run_id uuid, step_slug text, task_index int)
left join pgflow.step_tasks t on t.run_id = k.run_id and t.step_slug = k.step_slug and t.task_index = k.task_index
where t.status is distinct from 'started' or t.last_worker_id is distinct from $2::uuid
)sql";
inline constexpr char kMarkStopped[] = "select pgflow.mark_worker_stopped($1::uuid)";
inline constexpr char kRunInput[] = "select input::text from pgflow.runs where run_id = $1::uuid";

}  // namespace pgflow::internal

#endif  // PGFLOW_WORKER_STATEMENTS_H_
