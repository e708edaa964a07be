-- Pauses a worker function: its workers stop claiming (claim_tasks) and new ones are refused at
-- registration (register_worker) until an operator runs resume_worker_function.
-- One way on purpose: SECURITY DEFINER, so a role may be given the power to pause (EXECUTE)
-- without the power to resume (UPDATE on paused_at). Since schema 0012 claim_tasks runs as the
-- owner, so the worker role needs neither, and a worker that paused its function cannot lift
-- the pause itself. A pause already in place gets the newer reason and time.
-- Locks: the worker_functions row.
-- Called by: _refuse_claim_batch, `pgflow workers pause` (operators).
create or replace function pgflow._pause_worker_function(p_function_name text, p_reason text)
returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
  update pgflow.worker_functions w
  set paused_at = clock_timestamp(), pause_reason = p_reason, updated_at = clock_timestamp()
  where w.function_name = p_function_name
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody else calls it.
revoke execute on function pgflow._pause_worker_function(text, text) from public;
