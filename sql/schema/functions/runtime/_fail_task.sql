-- The failure path shared by fail_task(s), stall recovery and wait steps. Retries with backoff
-- while attempts remain, unless `p_exhaust` treats this attempt as the last one; then applies
-- the step's when_exhausted mode (fail the step and the run, skip the step, or skip it with
-- everything downstream).
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: fail_task, fail_tasks, requeue_stalled_tasks, _resolve_waiting_task.
create or replace function pgflow._fail_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                  p_error_message text, p_exhaust boolean)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_flow pgflow.flows;
  v_max_attempts int;
  v_base_delay int;
begin
  select * into v_run from pgflow.runs r where r.run_id = p_run_id for update;
  if not found then
    return;
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = p_run_id and ss.step_slug = p_step_slug for update;
  select * into v_task from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
  for update;
  if not found then
    return;
  end if;

  if v_run.status <> 'started' or v_state.status <> 'started' then
    perform pgflow._archive_task_message(p_run_id, p_step_slug, p_task_index);
    return next v_task;
    return;
  end if;
  -- Only a started task fails: a queued task (already retried) keeps its backoff.
  if v_task.status <> 'started' then
    return next v_task;
    return;
  end if;

  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = p_step_slug;
  select * into v_flow from pgflow.flows f where f.flow_slug = v_run.flow_slug;
  v_max_attempts := coalesce(v_step.opt_max_attempts, v_flow.opt_max_attempts);
  v_base_delay := coalesce(v_step.opt_base_delay, v_flow.opt_base_delay);

  if not p_exhaust and v_task.attempts_count < v_max_attempts then
    update pgflow.step_tasks t
    set status = 'queued', started_at = null, error_message = p_error_message
    where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
    returning * into v_task;
    perform pgflow._set_task_message_vt(p_run_id, p_step_slug, p_task_index,
                                        pgflow.calculate_retry_delay(v_base_delay, v_task.attempts_count));
    return next v_task;
    return;
  end if;

  update pgflow.step_tasks t
  set status = 'failed', failed_at = greatest(now(), t.started_at, t.queued_at), error_message = p_error_message
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
  returning * into v_task;

  if v_step.when_exhausted = 'fail' then
    update pgflow.step_states ss
    set status = 'failed', failed_at = greatest(now(), ss.started_at), error_message = p_error_message
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
    perform pgflow._fail_run(p_run_id, p_error_message);
  else
    update pgflow.step_states ss
    set status = 'skipped', skip_reason = 'handler_failed', skipped_at = greatest(now(), ss.created_at),
        error_message = p_error_message, remaining_tasks = null
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = p_run_id;
    perform pgflow._terminate_tasks(p_run_id, array[p_step_slug], 'skipped');
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
    if v_step.when_exhausted = 'skip-cascade' then
      perform pgflow._cascade_force_skip_steps(p_run_id, p_step_slug, 'handler_failed');
    else
      perform pgflow._release_children(p_run_id, v_run.flow_slug, array[p_step_slug], 0, true);
    end if;
    perform pgflow._advance_run(p_run_id);
  end if;

  perform pgflow._archive_task_message(p_run_id, p_step_slug, p_task_index);
  return next v_task;
end;
$$;
