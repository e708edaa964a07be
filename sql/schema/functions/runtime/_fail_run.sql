-- Fails a started run: status, run:failed event, and every unfinished task cancelled (their
-- messages archived).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (a `fail` condition), _fail_type_violation (a type
-- violation), _fail_task (when_exhausted fail), cancel_run.
create or replace function pgflow._fail_run(p_run_id uuid, p_error_message text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r set status = 'failed', failed_at = greatest(now(), r.started_at)
  where r.run_id = p_run_id and r.status = 'started'
  returning * into v_run;
  if not found then
    return;
  end if;
  perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status, p_error_message);
  perform pgflow._terminate_tasks(p_run_id, null, 'cancelled');
end;
$$;
