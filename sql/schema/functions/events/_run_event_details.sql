-- The broadcast payload of a run event beyond event_type, run_id, flow_slug and status (see
-- _emit_run_event).
-- Called by: _emit_events, when it broadcasts.
create or replace function pgflow._run_event_details(p_run pgflow.runs, p_error_message text)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  return case p_run.status
           when 'started' then jsonb_build_object('input', p_run.input,
                                                  'remaining_steps', p_run.remaining_steps,
                                                  'started_at', p_run.started_at)
           when 'completed' then jsonb_build_object('output', p_run.output,
                                                    'completed_at', p_run.completed_at)
           else jsonb_build_object('failed_at', p_run.failed_at)
                || case when p_error_message is null then '{}'::jsonb
                        else jsonb_build_object('error_message', p_error_message) end
         end;
end;
$$;
