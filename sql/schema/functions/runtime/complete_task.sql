-- Reports a task's result. Only a started task of a started step of a started run completes;
-- anything else changes nothing (a late callback's message is archived). The last task of a
-- step completes the step (a map's output is every task output in task_index order), releases
-- its dependents and advances the run. A single step feeding a map whose size is still
-- unknown must produce an array, or the run fails with [TYPE_VIOLATION].
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: complete_tasks, _resolve_waiting_task; workers of protocols 4 and 5 and upstream's;
-- SQL users. Calls _fail_type_violation (off the hot path).
create or replace function pgflow.complete_task(run_id uuid, step_slug text, task_index int, output jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_child text;
  v_output jsonb;
begin
  -- Lock order: run, step state, task; their messages last.
  select * into v_run from pgflow.runs r where r.run_id = complete_task.run_id for update;
  if not found then
    return;
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = complete_task.run_id and ss.step_slug = complete_task.step_slug for update;
  select * into v_task from pgflow.step_tasks t
  where t.run_id = complete_task.run_id and t.step_slug = complete_task.step_slug
    and t.task_index = complete_task.task_index
  for update;
  if not found then
    return;
  end if;

  -- Late callbacks: the run or the step already ended (the task was cancelled or skipped,
  -- which are terminal), so nothing changes; the message can go.
  if v_run.status <> 'started' or v_state.status <> 'started' then
    perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
    return next v_task;
    return;
  end if;
  -- Only a started task completes; queued, completed or failed tasks stay as they are.
  if v_task.status <> 'started' then
    return next v_task;
    return;
  end if;

  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = complete_task.step_slug;

  -- A single step feeding a map whose size is still unknown must produce an array (checked
  -- only for outputs that are not arrays: an array is always fine).
  if v_step.step_type = 'single'
     and (complete_task.output is null or jsonb_typeof(complete_task.output) <> 'array') then
    select c.step_slug into v_child
    from pgflow.deps d
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    join pgflow.step_states c on c.run_id = v_run.run_id and c.step_slug = d.step_slug
    where d.flow_slug = v_run.flow_slug and d.dep_slug = complete_task.step_slug
      and cs.step_type = 'map' and c.status = 'created' and c.initial_tasks is null
    order by cs.step_index
    limit 1;
    if v_child is not null then
      return next pgflow._fail_type_violation(v_run, v_task, v_child, complete_task.output);
      return;
    end if;
  end if;

  update pgflow.step_tasks t
  set status = 'completed', completed_at = greatest(now(), t.started_at, t.queued_at), output = complete_task.output
  where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
    and t.task_index = v_task.task_index
  returning * into v_task;

  if v_state.remaining_tasks > 1 then
    update pgflow.step_states ss set remaining_tasks = ss.remaining_tasks - 1
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug;
  else
    -- The last task (the step state is locked, so no sibling can finish in between): the
    -- step is done. A map's output is every task output in task_index order.
    v_output := case when v_step.step_type = 'map'
      then (select coalesce(jsonb_agg(t.output order by t.task_index), '[]'::jsonb)
            from pgflow.step_tasks t
            where t.run_id = v_run.run_id and t.step_slug = complete_task.step_slug
              and t.status = 'completed')
      else complete_task.output end;
    update pgflow.step_states ss
    set remaining_tasks = 0, status = 'completed', completed_at = greatest(now(), ss.started_at), output = v_output
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug
    returning * into v_state;
    perform pgflow._release_children(
      v_run.run_id, v_run.flow_slug, array[complete_task.step_slug],
      case when jsonb_typeof(v_output) = 'array' then jsonb_array_length(v_output) end,
      true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = v_run.run_id;
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
    perform pgflow._advance_run(v_run.run_id);
  end if;

  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return next v_task;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.complete_task(uuid, text, int, jsonb) from public;
