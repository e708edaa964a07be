-- Records a heartbeat; returns true when an operator deprecated the worker (it should stop
-- polling and drain).
-- Called by: the worker's heartbeat thread.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.worker_heartbeat(worker_id uuid) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_deprecated boolean;
begin
  update pgflow.workers w set last_heartbeat_at = clock_timestamp()
  where w.worker_id = worker_heartbeat.worker_id
  returning w.deprecated_at is not null into v_deprecated;
  return v_deprecated;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.worker_heartbeat(uuid) from public;
