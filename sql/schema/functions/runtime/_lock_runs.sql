-- Locks the given runs FOR UPDATE in run_id order, one primary-key probe each (no plan that
-- depends on statistics), so that batch callers lock runs in one global order and cannot
-- deadlock each other. Missing runs are skipped.
-- Locks: runs FOR UPDATE (lock order position 2), nothing else.
-- Called by: complete_tasks, fail_tasks, release_claim.
create or replace function pgflow._lock_runs(p_run_ids uuid[]) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_run_id uuid;
begin
  for v_run_id in select distinct u.id from unnest(p_run_ids) u(id) order by u.id loop
    perform 1 from pgflow.runs r where r.run_id = v_run_id for update;
  end loop;
end;
$$;
