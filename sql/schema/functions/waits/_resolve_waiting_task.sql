-- Ends a waiting task (since 0021): completes it with `p_output` (a signal's payload, a sleep's
-- end, a timeout's timeoutOutput) through complete_task, or, with `p_error`, fails it through
-- _fail_task as its last attempt (a wait is not retried), so the step's when_exhausted decides:
-- fail the run, skip the step, or skip it and everything downstream. Returns false, changing
-- nothing, when the task is not waiting (anymore).
-- Locks: the caller holds the run; step state -> task (as complete_task and _fail_task take
-- them again).
-- Called by: _settle_waits, send_signal.
create or replace function pgflow._resolve_waiting_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                                        p_output jsonb, p_error text default null)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform 1 from pgflow.step_states ss
  where ss.run_id = p_run_id and ss.step_slug = p_step_slug for update;
  -- complete_task and _fail_task end started tasks only: the wait ends as a start would.
  update pgflow.step_tasks t set status = 'started', started_at = greatest(now(), t.queued_at), wake_at = null
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
    and t.status = 'waiting';
  if not found then
    return false;
  end if;
  if p_error is null then
    perform pgflow.complete_task(p_run_id, p_step_slug, p_task_index, p_output);
  else
    perform pgflow._fail_task(p_run_id, p_step_slug, p_task_index, p_error, true);
  end if;
  return true;
end;
$$;
