-- The broadcast payload of a step event beyond event_type, run_id, step_slug and status (see
-- _emit_step_event), from the step state's row; `p_status` is the event's status (a started
-- wait step's is 'waiting').
-- Called by: _emit_events, when it broadcasts.
create or replace function pgflow._step_event_details(p_state pgflow.step_states, p_status text)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  return case p_status
       when 'started' then jsonb_build_object('started_at', p_state.started_at,
                                              'remaining_tasks', p_state.remaining_tasks,
                                              'remaining_deps', p_state.remaining_deps)
       when 'waiting' then jsonb_build_object('started_at', p_state.started_at,
                                              'remaining_tasks', p_state.remaining_tasks)
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
     end;
end;
$$;
