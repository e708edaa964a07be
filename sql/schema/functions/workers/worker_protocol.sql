-- The worker protocol this database speaks. 2 = queue identity (claim_tasks, register_worker).
-- A worker compares it with its own before doing anything else.
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select 2
$$;
