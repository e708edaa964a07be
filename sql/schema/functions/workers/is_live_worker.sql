-- The one rule for "a live worker": not stopped, not deprecated, and a heartbeat within the
-- last 30 seconds (workers beat every 5 s by default: six missed beats). `pgflow flows`,
-- `pgflow workers` and the queries of docs/worker.md and docs/deploying.md count with it.
-- Locks: none.
-- Called by: operators (the CLI, monitoring queries).
create or replace function pgflow.is_live_worker(worker pgflow.workers) returns boolean
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select worker.stopped_at is null and worker.deprecated_at is null
         and worker.last_heartbeat_at > now() - interval '30 seconds'
$$;
