-- Recovers tasks whose worker vanished: started longer ago than the step's effective timeout
-- + 30 s, in started steps of started runs. Up to 3 times (while attempts remain) the task is
-- requeued and its message made visible at once; after that it is marked permanently stalled
-- and fails as exhausted, so when_exhausted decides and the run can finish. Runs busy with
-- another state change are skipped (SKIP LOCKED) and picked up on the next call. Only tasks
-- whose queue is their step's route are touched (a task row is never trusted to name a queue).
-- One pass at a time: a call while another pass holds the row 'stall_recovery' of pgflow.locks
-- returns NULL at once (skipped; before schema 0012 this was an advisory lock any login could
-- hold); a pass records its end in that row's last_completed_at. Returns the number of tasks
-- requeued. Each pass also admits held tasks of limited flows that have room
-- (_admit_waiting_tasks, since 0018), including the flows whose slots this pass freed (an
-- exhausted stall ending an admitted task): since 0027 the sweep admits those itself, so the
-- commit admits nothing and never waits for a gate row (before, it could deadlock with a
-- commit of two limited flows). SECURITY DEFINER: only granted roles may call it.
-- Locks: the 'stall_recovery' row (SKIP LOCKED) -> per candidate, run FOR UPDATE SKIP LOCKED ->
-- task FOR UPDATE -> messages; then gate rows and held tasks, neither waited for (SKIP LOCKED);
-- nothing at commit.
-- Called by: live C++ workers (which warn when their calls keep being skipped), or pg_cron (see
-- setup_requeue_stalled_tasks_cron).
create or replace function pgflow.requeue_stalled_tasks() returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_candidate record;
  v_task pgflow.step_tasks;
  v_requeued int := 0;
begin
  perform 1 from pgflow.locks l where l.lock_name = 'stall_recovery' for update skip locked;
  if not found then
    return null;
  end if;
  for v_candidate in
    select t.run_id, t.step_slug, t.task_index,
           coalesce(s.opt_timeout, f.opt_timeout) as timeout,
           coalesce(s.opt_max_attempts, f.opt_max_attempts) as max_attempts
    from pgflow.step_tasks t
    join pgflow.runs r on r.run_id = t.run_id
    join pgflow.step_states ss on ss.run_id = t.run_id and ss.step_slug = t.step_slug
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
                       and s.queue_name = t.queue_name
    join pgflow.flows f on f.flow_slug = t.flow_slug
    where t.status = 'started' and t.permanently_stalled_at is null
      and r.status = 'started' and ss.status = 'started'
      and t.started_at < now() - make_interval(secs => coalesce(s.opt_timeout, f.opt_timeout) + 30)
    order by t.run_id, t.step_slug, t.task_index
  loop
    perform 1 from pgflow.runs r
    where r.run_id = v_candidate.run_id and r.status = 'started'
    for update skip locked;
    continue when not found;

    select * into v_task from pgflow.step_tasks t
    where t.run_id = v_candidate.run_id and t.step_slug = v_candidate.step_slug
      and t.task_index = v_candidate.task_index
    for update;
    -- Re-check under the locks: the task may have finished meanwhile.
    continue when v_task.status <> 'started'
      or v_task.started_at >= now() - make_interval(secs => v_candidate.timeout + 30)
      or not exists (select 1 from pgflow.step_states ss
                     where ss.run_id = v_task.run_id and ss.step_slug = v_task.step_slug
                       and ss.status = 'started');

    if v_task.requeued_count < 3 and v_task.attempts_count < v_candidate.max_attempts then
      update pgflow.step_tasks t
      set status = 'queued', started_at = null, last_worker_id = null,
          requeued_count = t.requeued_count + 1, last_requeued_at = now()
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
        and t.task_index = v_task.task_index;
      perform pgflow._set_task_message_vt(v_task.run_id, v_task.step_slug, v_task.task_index, 0);
      v_requeued := v_requeued + 1;
    else
      update pgflow.step_tasks t set permanently_stalled_at = now()
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
        and t.task_index = v_task.task_index;
      perform pgflow._fail_task(v_task.run_id, v_task.step_slug, v_task.task_index,
        format('Task stalled: no result within the %s s timeout (+30 s) after %s requeues',
               v_candidate.timeout, v_task.requeued_count),
        true);
    end if;
  end loop;
  -- Held tasks a commit could not admit (concurrency limits, since 0018).
  perform pgflow._admit_waiting_tasks();
  update pgflow.locks l set last_completed_at = clock_timestamp() where l.lock_name = 'stall_recovery';
  return v_requeued;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.requeue_stalled_tasks() from public;
