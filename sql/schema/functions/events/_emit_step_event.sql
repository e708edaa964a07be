-- Publishes a step's current status as step:<slug>:<status>, with upstream's payload for it:
--   step:started    started_at, remaining_tasks, remaining_deps
--   step:completed  output, completed_at; a taskless step (initial_tasks = 0, completed
--                   without tasks) also started_at, remaining_tasks and remaining_deps
--   step:failed     error_message, failed_at
--   step:skipped    skip_reason, skipped_at, and flow_slug; a step skipped because its
--                   handler failed carries error_message instead of flow_slug (as upstream)
-- The one place step event payloads are built; the part beyond ids and status (outputs can
-- be large) only when it is broadcast (_emit).
-- Called by: _enqueue_step_tasks, complete_task, _fail_type_violation, _fail_task,
-- cascade_resolve_conditions, _emit_step_events.
create or replace function pgflow._emit_step_event(p_state pgflow.step_states)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'step:' || p_state.status, 'run_id', p_state.run_id,
                       'step_slug', p_state.step_slug, 'status', p_state.status),
    'step:' || p_state.step_slug || ':' || p_state.status, p_state.flow_slug, p_state => p_state);
end;
$$;

