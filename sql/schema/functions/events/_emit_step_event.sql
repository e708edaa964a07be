-- Publishes a step's current status as step:<slug>:<status>, with upstream's payload for it:
--   step:started    started_at, remaining_tasks, remaining_deps
--   step:waiting    started_at, remaining_tasks: a started wait step's tasks wait (since 0021;
--                   its step state says 'started', the event 'waiting')
--   step:completed  output, completed_at; a taskless step (initial_tasks = 0, completed
--                   without tasks) also started_at, remaining_tasks and remaining_deps
--   step:failed     error_message, failed_at
--   step:skipped    skip_reason, skipped_at, and flow_slug; a step skipped because its
--                   handler failed carries error_message instead of flow_slug (as upstream)
-- (_emit_events builds and publishes it; the part beyond ids and status - outputs can be
-- large - only when it is broadcast, by _step_event_details, from the step state's row.)
-- Takes the step state's keys and status, not its row (since 0024; see _emit_events).
-- Called by: _enqueue_step_tasks, _start_waiting_tasks, complete_task, _fail_type_violation, _fail_task,
-- cascade_resolve_conditions, resume_run, cancel_run.
create or replace function pgflow._emit_step_event(p_run_id uuid, p_flow_slug text,
                                                   p_step_slug text, p_status text)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(array[p_run_id], array[p_flow_slug], array[p_step_slug],
                              array[p_status]);
end;
$$;
