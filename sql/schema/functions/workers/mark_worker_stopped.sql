-- Records that a worker stopped (its last act).
-- Called by: the worker's heartbeat thread at stop.
create or replace function pgflow.mark_worker_stopped(worker_id uuid) returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
  update pgflow.workers w set stopped_at = clock_timestamp()
  where w.worker_id = mark_worker_stopped.worker_id
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.mark_worker_stopped(uuid) from public;
