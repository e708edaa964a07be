-- Publishes a step's current status as step:<slug>:<status>, with upstream's payload for it:
--   step:started    started_at, remaining_tasks, remaining_deps
--   step:completed  output, completed_at; a taskless step (initial_tasks = 0, completed
--                   without tasks) also started_at, remaining_tasks and remaining_deps
--   step:failed     error_message, failed_at
--   step:skipped    skip_reason, skipped_at, and flow_slug; a step skipped because its
--                   handler failed carries error_message instead of flow_slug (as upstream)
-- The one place step event payloads are built.
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
                       'step_slug', p_state.step_slug, 'status', p_state.status)
      || case p_state.status
           when 'started' then jsonb_build_object('started_at', p_state.started_at,
                                                  'remaining_tasks', p_state.remaining_tasks,
                                                  'remaining_deps', p_state.remaining_deps)
           when 'completed' then jsonb_build_object('output', p_state.output,
                                                    'completed_at', p_state.completed_at)
                || case when p_state.initial_tasks = 0
                        then jsonb_build_object('started_at', p_state.started_at,
                                                'remaining_tasks', p_state.remaining_tasks,
                                                'remaining_deps', p_state.remaining_deps)
                        else '{}'::jsonb end
           when 'failed' then jsonb_build_object('error_message', p_state.error_message,
                                                 'failed_at', p_state.failed_at)
           else jsonb_build_object('skip_reason', p_state.skip_reason,
                                   'skipped_at', p_state.skipped_at)
                || case when p_state.error_message is null
                        then jsonb_build_object('flow_slug', p_state.flow_slug)
                        else jsonb_build_object('error_message', p_state.error_message) end
         end,
    'step:' || p_state.step_slug || ':' || p_state.status, p_state.flow_slug);
end;
$$;
