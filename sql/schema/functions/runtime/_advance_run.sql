-- Moves a run forward after a state change: conditions and taskless cascades until nothing
-- changes, then starts ready steps and completes the run if it is done. Returns false when a
-- condition failed the run (cascade_resolve_conditions); true otherwise, also when starting a
-- step failed it (a wait step with when_exhausted fail). No caller reads it.
-- Locks: the caller holds the run.
-- Called by: start_flow_by_slug, complete_task (when a step completed), complete_tasks,
-- _fail_task (after a skip), resume_run.
create or replace function pgflow._advance_run(p_run_id uuid) returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  -- Fast path: no step is waiting to be evaluated or started (the common case after a task
  -- of a map or of a last step completes), so only completion is left to check.
  if exists (select 1 from pgflow.step_states ss
             where ss.run_id = p_run_id and ss.status = 'created' and ss.remaining_deps = 0) then
    loop
      if not pgflow.cascade_resolve_conditions(p_run_id) then
        return false;
      end if;
      exit when pgflow.cascade_complete_taskless_steps(p_run_id) = 0;
    end loop;
    perform pgflow.start_ready_steps(p_run_id);
  end if;
  perform pgflow.maybe_complete_run(p_run_id);
  return true;
end;
$$;
