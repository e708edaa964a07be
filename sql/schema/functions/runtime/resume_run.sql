-- Continues a failed (or cancelled) run where it stopped, in one transaction: completed steps
-- and tasks keep their outputs; every failed or cancelled task of a started or failed step is
-- queued again with fresh attempts and a new message (visible at once; or held for admission,
-- without a message until admitted, when a concurrency limit applies to it, since 0018) - a
-- wait step's task waits again, with a new deadline (since 0021); failed steps with tasks
-- are started again, failed steps without tasks (a condition failed them) created again; the
-- run is started again (run:started, step:started) and advanced as usual, so steps that never
-- started start when ready. Skipped steps stay skipped: a skip (an unmet condition, or
-- when_exhausted skip / skip-cascade) is an outcome the run had continued past, not where it
-- stopped. Returns the run as the resumption left it (it may fail again at once, e.g. on the
-- same unmet condition).
-- Refused (55000) for a run that is started or completed, or whose flow was redefined after
-- it started (a step added, the flow recreated): retry_run starts a new run instead. An
-- unknown run is P0002. Results of the tasks' earlier attempts that arrive late change nothing
-- unless the task has been claimed again (then the first result of that task wins, as after
-- stall recovery). An earlier message a reader held locked when the run stopped (so it was
-- not archived) names a task that now has another message: the claim that reads it archives
-- it as a superseded copy (_classify_claim_batch; since 0027, before which it was fatal and
-- paused the worker function). SECURITY DEFINER: only granted roles may call it.
-- Locks: run FOR UPDATE -> step states -> tasks -> messages.
-- Called by: Client::resume_run, `pgflow run resume`; SQL users.
create or replace function pgflow.resume_run(run_id uuid) returns pgflow.runs
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_batch record;
begin
  v_run := pgflow._lock_run_for_control(resume_run.run_id, 'resumed');
  if exists (select 1 from pgflow.flows f where f.flow_slug = v_run.flow_slug and f.created_at > v_run.started_at)
     or exists (select 1 from pgflow.steps s where s.flow_slug = v_run.flow_slug and s.created_at > v_run.started_at)
     or (select count(*) from pgflow.steps s where s.flow_slug = v_run.flow_slug)
        <> (select count(*) from pgflow.step_states ss where ss.run_id = v_run.run_id) then
    raise exception 'Run "%" cannot be resumed: flow "%" was redefined after the run started', v_run.run_id, v_run.flow_slug
      using errcode = 'object_not_in_prerequisite_state',
            hint = 'Start a new run with the same input instead: Client::retry_run, `pgflow run retry RUN_ID` or pgflow.retry_run.';
  end if;

  -- The run first (run:started before its steps' events), then tasks (the step counts below
  -- are taken from them), then step states.
  update pgflow.runs r
  set status = 'started', failed_at = null, cancelled_at = null, cancel_reason = null
  where r.run_id = v_run.run_id
  returning * into v_run;
  perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status);
  perform 1 from pgflow.step_states ss where ss.run_id = v_run.run_id order by ss.step_slug for update;
  update pgflow.step_tasks t
  set status = case when s.wait is null then 'queued' else 'waiting' end,
      attempts_count = 0, error_message = dl.error_message, output = null, message_id = null,
      gate = case when t.gate is not null then 'held' end,
      queued_at = now(), started_at = null, failed_at = null, last_worker_id = null,
      requeued_count = 0, last_requeued_at = null, permanently_stalled_at = null,
      wake_at = dl.wake_at
  from pgflow.step_states ss
  join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
  left join lateral pgflow._wait_deadline(v_run, s.step_slug, s.wait) dl on s.wait is not null
  where t.run_id = v_run.run_id and ss.run_id = t.run_id and ss.step_slug = t.step_slug
    and ss.status in ('started', 'failed') and t.status in ('failed', 'cancelled');

  for v_state in
    update pgflow.step_states ss
    set status = case when c.tasks > 0 then 'started' else 'created' end,
        started_at = case when c.tasks > 0 then ss.started_at end,
        remaining_tasks = case when c.tasks > 0 then c.tasks - c.completed end,
        failed_at = null, error_message = null
    from (select ss2.step_slug, count(t.task_index)::int as tasks,
                 (count(*) filter (where t.status = 'completed'))::int as completed
          from pgflow.step_states ss2
          left join pgflow.step_tasks t on t.run_id = ss2.run_id and t.step_slug = ss2.step_slug
          where ss2.run_id = v_run.run_id and ss2.status = 'failed'
          group by ss2.step_slug) c
    where ss.run_id = v_run.run_id and ss.step_slug = c.step_slug
    returning ss.*
  loop
    if v_state.status = 'started' then
      perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
    end if;
  end loop;
  -- Wait steps that wait again (started before, whether they failed or not) say so.
  for v_state in
    select ss.* from pgflow.step_states ss
    where ss.run_id = v_run.run_id and ss.status = 'started'
      and exists (select 1 from pgflow.step_tasks t
                  where t.run_id = ss.run_id and t.step_slug = ss.step_slug and t.status = 'waiting')
    order by ss.step_slug
  loop
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, 'waiting');
  end loop;

  -- New messages, one batch per task queue snapshot, visible at once. A task a concurrency
  -- limit applies to waits held again, without a message: the commit admits it (the status
  -- update above queued its flow's admission) and sends one.
  for v_batch in
    select t.queue_name,
           array_agg(t.run_id order by t.step_slug, t.task_index) as runs,
           array_agg(t.step_slug order by t.step_slug, t.task_index) as slugs,
           array_agg(t.task_index order by t.step_slug, t.task_index) as indexes
    from pgflow.step_tasks t
    where t.run_id = v_run.run_id and t.status = 'queued' and t.message_id is null and t.gate is null
    group by t.queue_name
    order by t.queue_name
  loop
    perform pgflow._send_task_messages(v_batch.queue_name, v_run.flow_slug, v_batch.runs, v_batch.slugs,
                                       v_batch.indexes, 0);
  end loop;

  perform pgflow._advance_run(v_run.run_id);
  -- (A wait whose sleep ended while the run was failed completes now.)
  perform pgflow._settle_waits(v_run.run_id);
  select * into v_run from pgflow.runs r where r.run_id = v_run.run_id;
  return v_run;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.resume_run(uuid) from public;
