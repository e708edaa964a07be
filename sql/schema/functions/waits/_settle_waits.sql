-- Ends every waiting task of a run that can end now (since 0021), in (step, task index) order:
-- a task with a buffered signal takes it (the signal is consumed, its payload the output); a
-- due task wakes - a sleep completes with {"until": its wake time}, a timed-out wait completes
-- with its timeoutOutput or fails (a sleep that found no timestamp fails with the reason).
-- Stops when the run ends on the way (a failure, or a skip-cascade that ended it).
-- Returns how many tasks it ended. Due means wake_at at or before the wall clock when the call
-- began (since 0027, when _wait_deadline counts deadlines from the wall clock too: a sleep of
-- 0 s started in this transaction is due at once).
-- Locks: the caller holds the run; step states -> tasks -> signals (_resolve_waiting_task).
-- Called by: start_ready_steps and start_flow_by_slug (after starting wait steps), resume_run,
-- wake_waiting_tasks.
create or replace function pgflow._settle_waits(p_run_id uuid) returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_task record;
  v_ended int := 0;
  v_now timestamptz := clock_timestamp();
begin
  for v_task in
    select t.step_slug, t.task_index, t.wake_at, t.error_message, s.wait, g.signal_id, g.payload
    from pgflow.step_tasks t
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
    left join pgflow.signals g on g.run_id = t.run_id and g.step_slug = t.step_slug
                              and g.task_index = t.task_index and g.consumed_at is null
    where t.run_id = p_run_id and t.status = 'waiting'
      and (g.signal_id is not null or t.wake_at <= v_now)
    order by t.step_slug, t.task_index
  loop
    exit when (select r.status from pgflow.runs r where r.run_id = p_run_id) <> 'started';
    if v_task.signal_id is not null then
      if pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index, v_task.payload) then
        update pgflow.signals g set consumed_at = now()
        where g.run_id = p_run_id and g.step_slug = v_task.step_slug
          and g.task_index = v_task.task_index and g.signal_id = v_task.signal_id;
        v_ended := v_ended + 1;
      end if;
    elsif v_task.error_message is not null
          or (v_task.wait->>'kind' = 'signal' and not v_task.wait ? 'timeoutOutput') then
      if pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index, null,
           coalesce(v_task.error_message,
                    format('Step "%s" waited %s s for a signal and timed out', v_task.step_slug,
                           v_task.wait->>'timeout'))) then
        v_ended := v_ended + 1;
      end if;
    elsif pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index,
            case when v_task.wait->>'kind' = 'signal' then v_task.wait->'timeoutOutput'
                 else jsonb_build_object('until', v_task.wake_at) end) then
      v_ended := v_ended + 1;
    end if;
  end loop;
  return v_ended;
end;
$$;
