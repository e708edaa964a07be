-- Included by the tests of this folder (\i _worker_statements.sql): the statements
-- pgflow::EdgeWorker sends, verbatim (src/worker/worker.cc, src/worker/reporter.cc), as
-- pg_temp functions with its parameters. They are SECURITY INVOKER, so they run with the rights
-- of whoever calls them (the tests call them as worker and starter logins).

-- kReadAndClaim: read up to qty messages and claim them, in one statement.
create function pg_temp.read_and_claim(p_queue text, p_flow text, p_worker uuid,
                                       p_qty int default 10, p_vt int default 30)
returns table (outcome text, msg_id text, run_id text, step_slug text, task_index int,
               attempt int, input text, flow_input text, reason text, timeout int)
language plpgsql as $f$
begin
  return query execute $sql$
select c.outcome, c.msg_id::text, c.run_id::text, c.step_slug, c.task_index, c.attempt,
       c.input::text, c.flow_input::text, c.reason, c.timeout
from pgflow.claim_tasks($1, $2,
                        array(select m.msg_id from pgmq.read($1, $3::int, $4::int) m),
                        $5::uuid) c
$sql$ using p_queue, p_flow, p_vt, p_qty, p_worker;
end
$f$;

-- kCompleteBatch: rows [{run_id, step_slug, task_index, output}].
create function pg_temp.complete_batch(p_rows jsonb) returns table (step_slug text, status text)
language plpgsql as $f$
begin
  return query execute $sql$
select t.step_slug, t.status from pgflow.complete_tasks($1::jsonb) t
$sql$ using p_rows;
end
$f$;

-- kFailBatch: rows [{run_id, step_slug, task_index, error_message}].
create function pg_temp.fail_batch(p_rows jsonb) returns table (step_slug text, status text)
language plpgsql as $f$
begin
  return query execute $sql$
select t.step_slug, t.status from pgflow.fail_tasks($1::jsonb) t
$sql$ using p_rows;
end
$f$;

-- kRecoverStalledTasks: stall recovery as the maintenance thread offers it (NULL when another
-- session's pass holds the lock; 0 without a pass when one completed within p_unless_within).
create function pg_temp.recover_stalled(p_unless_within interval default '0 seconds') returns int
language plpgsql as $f$
declare
  v int;
begin
  execute $sql$
select case when l.last_completed_at > pg_catalog.clock_timestamp() - $1::interval then 0
            else pgflow.requeue_stalled_tasks() end
from (select pg_catalog.set_config('synchronous_commit', 'off', true)) as async_commit
left join pgflow.locks l on l.lock_name = 'stall_recovery'
$sql$
  into v using p_unless_within;
  return v;
end
$f$;

-- One result row for the batch functions.
create function pg_temp.result(p_run uuid, p_step text, p_index int, p_output jsonb)
returns jsonb language sql immutable as $f$
  select jsonb_build_object('run_id', p_run, 'step_slug', p_step, 'task_index', p_index,
                            'output', p_output)
$f$;
create function pg_temp.failure(p_run uuid, p_step text, p_index int, p_error text)
returns jsonb language sql immutable as $f$
  select jsonb_build_object('run_id', p_run, 'step_slug', p_step, 'task_index', p_index,
                            'error_message', p_error)
$f$;
