-- Pauses a worker function: its workers stop claiming (claim_tasks) and new ones are refused at
-- registration (register_worker) until an operator runs resume_worker_function.
-- One way on purpose: SECURITY DEFINER, so the worker role needs no UPDATE on paused_at or
-- pause_reason (sql/contrib/grants.sql grants it EXECUTE on this function only) and a worker
-- that paused its function cannot lift the pause itself. A pause already in place gets the
-- newer reason and time.
-- Locks: the worker_functions row.
-- Called by: _refuse_claim_batch.
create or replace function pgflow._pause_worker_function(p_function_name text, p_reason text)
returns void
language sql volatile security definer
set search_path = ''
as $$
  update pgflow.worker_functions w
  set paused_at = clock_timestamp(), pause_reason = p_reason, updated_at = clock_timestamp()
  where w.function_name = p_function_name
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker role what it needs).
revoke execute on function pgflow._pause_worker_function(text, text) from public;
