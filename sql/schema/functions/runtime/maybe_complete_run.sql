-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf steps
-- (NULL when none completed). Only a started run can complete.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = now(),
      output = (
        select jsonb_object_agg(ss.step_slug, ss.output)
        from pgflow.step_states ss
        where ss.run_id = r.run_id and ss.status = 'completed'
          and not exists (select 1 from pgflow.deps d
                          where d.flow_slug = ss.flow_slug and d.dep_slug = ss.step_slug))
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit_run_event(v_run);
  end if;
end;
$$;
