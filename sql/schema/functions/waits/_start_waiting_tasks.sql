-- Gives a wait step that has just been started its tasks (since 0021): one waiting task per
-- element, without a message (queue_name keeps the step's route, as for any task), with its
-- wake_at (_wait_deadline). Publishes step:waiting (a started step whose tasks wait; its step
-- state keeps status 'started'). Signals buffered for it are taken by _settle_waits, which the
-- caller runs once all its steps are started.
-- Locks: the caller holds the run and the step state; task rows.
-- Called by: _enqueue_step_tasks.
create or replace function pgflow._start_waiting_tasks(p_run pgflow.runs, p_state pgflow.step_states,
                                                       p_queue_name text, p_wait jsonb)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, queue_name, status,
                                 wake_at, error_message)
  select p_run.flow_slug, p_run.run_id, p_state.step_slug, i, p_queue_name, 'waiting', d.wake_at,
         d.error_message
  from pgflow._wait_deadline(p_run, p_state.step_slug, p_wait) d, generate_series(0, p_state.initial_tasks - 1) i;
  perform pgflow._emit_step_event(p_state.run_id, p_state.flow_slug, p_state.step_slug, 'waiting');
end;
$$;
