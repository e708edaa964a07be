-- Upstream's [TYPE_VIOLATION]: a single step produced something other than an array for a
-- dependent map whose task count is still unknown. The task fails with the bad output stored,
-- the run fails (run:failed without an error message, its other tasks cancelled), then the
-- step fails (step:failed), and the task's message is archived. when_exhausted does not apply:
-- a type violation is never retried or skipped. Returns the task row.
-- Locks: the caller holds the run, the step state and the task (complete_task).
-- Called by: complete_task.
create or replace function pgflow._fail_type_violation(p_run pgflow.runs, p_task pgflow.step_tasks,
                                                       p_map_step text, p_output jsonb)
returns pgflow.step_tasks
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_type text := coalesce(jsonb_typeof(p_output), 'null');
  v_task pgflow.step_tasks;
  v_state pgflow.step_states;
begin
  update pgflow.step_tasks t
  set status = 'failed', failed_at = greatest(now(), t.started_at, t.queued_at), output = p_output,
      error_message = '[TYPE_VIOLATION] Produced ' || v_type || ' instead of array'
  where t.run_id = p_task.run_id and t.step_slug = p_task.step_slug
    and t.task_index = p_task.task_index
  returning * into v_task;
  perform pgflow._fail_run(p_run.run_id, null);
  update pgflow.step_states ss
  set status = 'failed', failed_at = greatest(now(), ss.started_at),
      error_message = '[TYPE_VIOLATION] Map step ' || p_map_step
        || ' expects array input but dependency ' || p_task.step_slug || ' produced ' || v_type
  where ss.run_id = p_run.run_id and ss.step_slug = p_task.step_slug
  returning * into v_state;
  perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return v_task;
end;
$$;
