-- Sends signal `signal_id` with `payload` to task `task_index` of wait step `step_slug` of run
-- `run_id` (since 0021), and says what became of it:
--   'delivered'  the task was waiting: it completes with the payload as its output (a map
--                step's output is its tasks' payloads in task_index order), and the run moves on
--   'buffered'   the step does not wait yet: the signal is kept, and the task takes it when the
--                step starts waiting (at most one per task, 1,000 per run)
--   'duplicate'  this run already has a signal `signal_id` for this task (delivered or
--                buffered): nothing changes, whatever the payload
-- Refused, changing nothing: an unknown run or step (P0002), a step that does not wait
-- for a signal, a task index outside the step (22023), a payload a waiting map's size cannot
-- come from (a non-array to a single step that feeds a map: 22023); a run that is not started, a
-- step or task that already ended, a second buffered signal for one task, a run's 1,001st
-- (55000). Sent in the caller's transaction: it takes effect when that commits. Refusals name
-- the run, step and task, never a signal id (since 0031): ids are the senders' data (a
-- webhook delivery's), and server logs keep errors.
-- Locks: run FOR UPDATE (bounded wait, _lock_run_for_control) -> step state -> task -> signals.
-- SECURITY DEFINER: only granted roles may call it (sql/contrib/grants.sql: pgflow_starter).
-- Called by: Client::send_signal, Transaction::send_signal, `pgflow run signal`; SQL users.
create or replace function pgflow.send_signal(run_id uuid, step_slug text, signal_id text,
                                              payload jsonb default 'null', task_index int default 0)
returns text
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step pgflow.steps;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_payload jsonb := coalesce(send_signal.payload, 'null'::jsonb);
  v_address text;
  v_child text;
begin
  if send_signal.run_id is null or send_signal.step_slug is null or send_signal.signal_id is null
     or send_signal.task_index is null then
    raise exception 'send_signal needs a run_id, a step_slug, a signal_id and a task_index'
      using errcode = 'null_value_not_allowed';
  end if;
  if length(send_signal.signal_id) not between 1 and 255 then
    raise exception 'Signal id must have 1 to 255 characters, not %', length(send_signal.signal_id)
      using errcode = 'invalid_parameter_value';
  end if;
  v_run := pgflow._lock_run_for_control(send_signal.run_id);
  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = send_signal.step_slug;
  if not found then
    raise exception 'Flow "%" of run "%" has no step "%"', v_run.flow_slug, v_run.run_id, send_signal.step_slug
      using errcode = 'no_data_found';
  end if;
  if v_step.wait is null or v_step.wait->>'kind' <> 'signal' then
    raise exception 'Step "%" of flow "%" does not wait for a signal (it %)', v_step.step_slug, v_step.flow_slug,
      case when v_step.wait is null then 'has a handler' else 'sleeps' end
      using errcode = 'invalid_parameter_value';
  end if;
  -- 'step "x" [task N] of run "r"', for the errors below.
  v_address := format('"%s"%s of run "%s"', v_step.step_slug,
                      case when v_step.step_type = 'map' then format(' task %s', send_signal.task_index) else '' end,
                      v_run.run_id);
  if send_signal.task_index < 0 or (v_step.step_type = 'single' and send_signal.task_index <> 0) then
    raise exception 'Task index % is not a task of % step "%" (%)', send_signal.task_index, v_step.step_type,
      v_step.step_slug, case when v_step.step_type = 'single' then 'a single step has task 0 only'
                             else 'a map step''s tasks are numbered from 0' end
      using errcode = 'invalid_parameter_value';
  end if;
  -- A resend is acknowledged whatever happened since (even when the run has ended).
  if exists (select 1 from pgflow.signals g
             where g.run_id = v_run.run_id and g.step_slug = v_step.step_slug
               and g.task_index = send_signal.task_index and g.signal_id = send_signal.signal_id) then
    return 'duplicate';
  end if;
  if v_run.status <> 'started' then
    raise exception 'Run "%" is %: the signal for step % is refused', v_run.run_id, v_run.status,
      v_address using errcode = 'object_not_in_prerequisite_state';
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = v_run.run_id and ss.step_slug = v_step.step_slug for update;
  if v_state.status in ('completed', 'failed', 'skipped') then
    raise exception 'Step "%" of run "%" is %: the signal is refused', v_step.step_slug, v_run.run_id,
      v_state.status using errcode = 'object_not_in_prerequisite_state';
  end if;

  -- A single step that feeds a map of unknown size must produce an array: refuse the signal
  -- rather than fail the run (complete_task would), buffered or not.
  if v_step.step_type = 'single' and jsonb_typeof(v_payload) <> 'array' then
    select cs.step_slug into v_child
    from pgflow.deps d
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    where d.flow_slug = v_run.flow_slug and d.dep_slug = v_step.step_slug and cs.step_type = 'map'
    order by cs.step_index limit 1;
    if v_child is not null then
      raise exception 'Step "%" feeds map step "%", so its signal''s payload must be a JSON array, not %',
        v_step.step_slug, v_child, jsonb_typeof(v_payload) using errcode = 'invalid_parameter_value';
    end if;
  end if;

  if v_state.status = 'created' then
    if exists (select 1 from pgflow.signals g
               where g.run_id = v_run.run_id and g.step_slug = v_step.step_slug
                 and g.task_index = send_signal.task_index and g.consumed_at is null) then
      raise exception 'Step % already has a buffered signal: this one is refused', v_address
        using errcode = 'object_not_in_prerequisite_state',
        hint = 'A task takes one signal; send this one after the step starts waiting, or resend the buffered one.';
    end if;
    if (select count(*) from pgflow.signals g
        where g.run_id = v_run.run_id and g.consumed_at is null) >= 1000 then
      raise exception 'Run "%" has 1000 buffered signals, the most it keeps: the signal for step % is refused',
        v_run.run_id, v_address using errcode = 'object_not_in_prerequisite_state';
    end if;
    insert into pgflow.signals (run_id, step_slug, task_index, signal_id, payload)
    values (v_run.run_id, v_step.step_slug, send_signal.task_index, send_signal.signal_id, v_payload);
    return 'buffered';
  end if;

  select * into v_task from pgflow.step_tasks t
  where t.run_id = v_run.run_id and t.step_slug = v_step.step_slug and t.task_index = send_signal.task_index
  for update;
  if not found then
    raise exception 'Task index % is not a task of map step "%" of run "%": it has % tasks',
      send_signal.task_index, v_step.step_slug, v_run.run_id, v_state.initial_tasks
      using errcode = 'invalid_parameter_value';
  end if;
  if v_task.status <> 'waiting' then
    raise exception 'Step % is %: the signal is refused', v_address, v_task.status
      using errcode = 'object_not_in_prerequisite_state';
  end if;
  insert into pgflow.signals (run_id, step_slug, task_index, signal_id, payload, consumed_at)
  values (v_run.run_id, v_step.step_slug, send_signal.task_index, send_signal.signal_id, v_payload, now());
  perform pgflow._resolve_waiting_task(v_run.run_id, v_step.step_slug, send_signal.task_index, v_payload);
  return 'delivered';
end;
$$;

revoke execute on function pgflow.send_signal(uuid, text, text, jsonb, int) from public;
