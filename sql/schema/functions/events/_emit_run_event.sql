-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- (_emit_events builds and publishes it; the part beyond ids and status - inputs and outputs
-- can be large - only when it is broadcast, by _run_event_details, from the run's row.)
-- Takes the run's keys and status, not its row (since 0024; see _emit_events).
-- Called by: start_flow_by_slug, maybe_complete_run, _fail_run, resume_run.
create or replace function pgflow._emit_run_event(p_run_id uuid, p_flow_slug text,
                                                  p_status text, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(array[p_run_id], array[p_flow_slug], array[null::text],
                              array[p_status], p_error_message);
end;
$$;
