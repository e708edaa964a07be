-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- The one place run event payloads are built; the part beyond ids and status (inputs and
-- outputs can be large) only when it is broadcast (_emit).
-- Called by: start_flow, maybe_complete_run, _fail_run.
create or replace function pgflow._emit_run_event(p_run pgflow.runs, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'run:' || p_run.status, 'run_id', p_run.run_id,
                       'flow_slug', p_run.flow_slug, 'status', p_run.status),
    'run:' || p_run.status, p_run.flow_slug, p_run => p_run, p_error_message => p_error_message);
end;
$$;

