-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf steps
-- (NULL when none completed; _run_output). Only a started run can complete.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = greatest(now(), r.started_at),
      output = pgflow._run_output(r.run_id)
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status);
  end if;
end;
$$;
