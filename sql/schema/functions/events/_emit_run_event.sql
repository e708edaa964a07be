-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- (_emit_events builds and publishes it; the part beyond ids and status - inputs and outputs
-- can be large - only when it is broadcast, by _run_event_details.)
-- Called by: start_flow, maybe_complete_run, _fail_run.
create or replace function pgflow._emit_run_event(p_run pgflow.runs, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(null, array[p_run], p_error_message);
end;
$$;
