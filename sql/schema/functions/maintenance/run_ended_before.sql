-- The one rule for "history old enough to prune": a run that completed or failed before
-- `cutoff`. sql/contrib/prune_data_older_than.sql deletes such runs (with their step states,
-- tasks and messages) and `pgflow prune` counts them with it.
-- Locks: none.
-- Called by: prune_data_older_than (contrib), `pgflow prune`.
create or replace function pgflow.run_ended_before(run pgflow.runs, cutoff timestamptz) returns boolean
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select run.status in ('completed', 'failed') and coalesce(run.completed_at, run.failed_at) < cutoff
$$;
