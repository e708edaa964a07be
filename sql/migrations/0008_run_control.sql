-- pgflow SQL core, 0008: run control.
--
--   * cancel_run(run_id, reason): a started run fails as cancelled (cancelled_at, cancel_reason;
--     run:failed "cancelled: <reason>"), its queued and started tasks are cancelled and their
--     messages archived; a finished run is left alone (returns false).
--   * retry_run(run_id, new_run_id): a new run of a failed or cancelled run's flow version with
--     the same input, linked by restart_of_run_id.
--   * resume_run(run_id): a failed or cancelled run continues where it stopped (completed steps
--     kept, failed and cancelled tasks queued again with fresh attempts).
--   * _terminate_tasks announces the queues of the started tasks it ends on channel
--     "pgflow_stop:<queue>" (_announce_stopped_tasks), so workers fire those handlers' stop
--     tokens.
--   * pgflow.runs gets cancelled_at, cancel_reason and restart_of_run_id (nullable, no
--     default: no rewrite), two check constraints and a partial index.
-- The three entry points are SECURITY DEFINER with EXECUTE revoked from PUBLIC;
-- sql/contrib/grants.sql grants them to pgflow_starter. The worker protocol stays 5.
--
-- Applied by the pgflow migration runner in one transaction. It takes ACCESS EXCLUSIVE on
-- pgflow.runs (every start, claim and result waits) for as long as it takes to check the new
-- constraints and build the index, one scan of the table each; it waits at most 10 s for the
-- lock (lock_timeout), after which it fails with nothing changed: run it again. Immutable once
-- released.

-- [migration-only: fence]
set local lock_timeout = '10s';
lock table pgflow.runs in access exclusive mode;
-- [end migration-only]

alter table pgflow.runs add column cancelled_at timestamptz;
alter table pgflow.runs add column cancel_reason text;
alter table pgflow.runs add column restart_of_run_id uuid references pgflow.runs (run_id) on delete set null;
alter table pgflow.runs add constraint cancelled_runs_are_failed
  check (cancelled_at is null or (status = 'failed' and failed_at is not null));
alter table pgflow.runs add constraint cancel_reason_only_when_cancelled
  check (cancel_reason is null or cancelled_at is not null);
create index idx_runs_restart_of_run_id on pgflow.runs (restart_of_run_id) where restart_of_run_id is not null;

set local check_function_bodies = off;

-- ---- sql/schema/functions/queues/_announce_stopped_tasks.sql
-- Tells the workers of a queue that tasks they may be running are no longer wanted (cancelled
-- or skipped): NOTIFY on channel "pgflow_stop:<queue_name>" (delivered at commit; one per queue
-- and transaction). A worker that hears it checks its running tasks and fires the stop tokens
-- of those that are no longer started by it (docs/worker.md).
-- Called by: _terminate_tasks.
create or replace function pgflow._announce_stopped_tasks(p_queue_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pg_notify('pgflow_stop:' || p_queue_name, '');
end;
$$;

-- ---- sql/schema/functions/queues/_terminate_tasks.sql
-- Moves every queued or started task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages, one batch per task queue snapshot
-- (_archive_messages): task rows first, then queue rows. The queues of tasks that were started
-- (a worker may be running them) are told to stop them (_announce_stopped_tasks).
-- Locks: the caller holds the run.
-- Called by: _fail_run (and so cancel_run), _cascade_force_skip_steps, _fail_task.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queues text[];
  v_ids bigint[];
  v_queue text;
begin
  -- (Read before the update: the update's RETURNING sees only the new status.)
  for v_queue in
    select distinct t.queue_name from pgflow.step_tasks t
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status = 'started'
    order by 1
  loop
    perform pgflow._announce_stopped_tasks(v_queue);
  end loop;
  with terminated as (
    update pgflow.step_tasks t
    set status = p_status
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status in ('queued', 'started')
    returning t.queue_name, t.message_id)
  select array_agg(x.queue_name), array_agg(x.message_id)
  into v_queues, v_ids
  from terminated x;
  perform pgflow._archive_messages(v_queues, v_ids);
end;
$$;

-- ---- sql/schema/functions/runtime/_lock_run_for_control.sql
-- The run cancel_run, retry_run or resume_run acts on, locked FOR UPDATE (FOR SHARE when
-- `p_for_share`: retry_run only copies it); an unknown run is P0002. With `p_verb` ('retried',
-- 'resumed'), a run that has not failed is refused (55000) naming its status.
-- Locks: the run (lock order position 2).
-- Called by: cancel_run, retry_run, resume_run.
create or replace function pgflow._lock_run_for_control(p_run_id uuid, p_verb text default null,
                                                        p_for_share boolean default false)
returns pgflow.runs
language plpgsql volatile
set search_path = ''
as $$
declare
  v_run pgflow.runs;
begin
  if p_for_share then
    select * into v_run from pgflow.runs r where r.run_id = p_run_id for share;
  else
    select * into v_run from pgflow.runs r where r.run_id = p_run_id for update;
  end if;
  if not found then
    raise exception 'Run "%" does not exist', p_run_id using errcode = 'no_data_found';
  end if;
  if p_verb is not null and v_run.status <> 'failed' then
    raise exception 'Run "%" is %: only a failed or cancelled run can be %', v_run.run_id, v_run.status, p_verb
      using errcode = 'object_not_in_prerequisite_state',
            hint = case when v_run.status = 'started' then 'Cancel it first (pgflow.cancel_run).'
                        else 'Start a new run (pgflow.start_flow) if it should run again.' end;
  end if;
  return v_run;
end;
$$;

-- ---- sql/schema/functions/runtime/cancel_run.sql
-- Cancels a started run in one transaction: the run becomes failed with cancelled_at and
-- `reason` (run:failed, error message "cancelled" or "cancelled: <reason>"), every queued or
-- started task becomes cancelled and its message is archived, and workers running its tasks are
-- told to stop them (_terminate_tasks). Step states stay as they were, as for any failed run.
-- Returns true when this call cancelled the run, false when the run had already finished
-- (nothing changes; a NOTICE says how it ended). An unknown run is an error (P0002). Later
-- results of its tasks change nothing (complete_task / fail_task ignore runs that are not
-- started). SECURITY DEFINER: only granted roles may call it.
-- Locks: run FOR UPDATE -> tasks -> messages (via _fail_run).
-- Called by: Client::cancel_run, `pgflow run cancel`; SQL users.
create or replace function pgflow.cancel_run(run_id uuid, reason text default null) returns boolean
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  v_run := pgflow._lock_run_for_control(cancel_run.run_id);
  if v_run.status <> 'started' then
    raise notice 'run % already finished (%): nothing to cancel', v_run.run_id,
      case when v_run.cancelled_at is not null then 'cancelled' else v_run.status end;
    return false;
  end if;
  perform pgflow._fail_run(v_run.run_id, 'cancelled' || coalesce(': ' || cancel_run.reason, ''));
  update pgflow.runs r set cancelled_at = r.failed_at, cancel_reason = cancel_run.reason
  where r.run_id = v_run.run_id;
  return true;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.cancel_run(uuid, text) from public;

-- ---- sql/schema/functions/runtime/retry_run.sql
-- Starts a new run of a failed (or cancelled) run's concrete flow version with the same input,
-- linked to it by restart_of_run_id, and returns the new run's id. `new_run_id` (a UUID the
-- caller chooses) makes the call safe to repeat: a second retry with it fails with 23505
-- instead of starting twice. Refused (55000) for a run that is still started or completed; an
-- unknown run is P0002. The original run is left as it is. SECURITY DEFINER: only granted
-- roles may call it.
-- Locks: the original run FOR SHARE (it cannot be resumed meanwhile); then the new run's rows,
-- as start_flow_by_slug.
-- Called by: Client::retry_run, `pgflow run retry`; SQL users.
create or replace function pgflow.retry_run(run_id uuid, new_run_id uuid default null) returns uuid
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_new uuid;
begin
  v_run := pgflow._lock_run_for_control(retry_run.run_id, 'retried', p_for_share => true);
  select r.run_id into v_new from pgflow.start_flow_by_slug(v_run.flow_slug, v_run.input, retry_run.new_run_id) r;
  update pgflow.runs r set restart_of_run_id = v_run.run_id where r.run_id = v_new;
  return v_new;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.retry_run(uuid, uuid) from public;

-- ---- sql/schema/functions/runtime/resume_run.sql
-- Continues a failed (or cancelled) run where it stopped, in one transaction: completed steps
-- and tasks keep their outputs; every failed or cancelled task of a started or failed step is
-- queued again with fresh attempts and a new message (visible at once); failed steps with tasks
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
-- stall recovery). SECURITY DEFINER: only granted roles may call it.
-- Locks: run FOR UPDATE -> step states -> tasks -> messages.
-- Called by: Client::resume_run, `pgflow run resume`; SQL users.
create or replace function pgflow.resume_run(run_id uuid) returns pgflow.runs
language plpgsql volatile security definer
set search_path = ''
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
            hint = 'Start a new run of the current definition (pgflow.retry_run starts one with the same input).';
  end if;

  -- The run first (run:started before its steps' events), then tasks (the step counts below
  -- are taken from them), then step states.
  update pgflow.runs r
  set status = 'started', failed_at = null, cancelled_at = null, cancel_reason = null
  where r.run_id = v_run.run_id
  returning * into v_run;
  perform pgflow._emit_run_event(v_run);
  perform 1 from pgflow.step_states ss where ss.run_id = v_run.run_id order by ss.step_slug for update;
  update pgflow.step_tasks t
  set status = 'queued', attempts_count = 0, error_message = null, output = null, message_id = null,
      queued_at = now(), started_at = null, failed_at = null, last_worker_id = null,
      requeued_count = 0, last_requeued_at = null, permanently_stalled_at = null
  from pgflow.step_states ss
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
      perform pgflow._emit_step_event(v_state);
    end if;
  end loop;

  -- New messages, one batch per task queue snapshot; send_batch returns ids in message order.
  for v_batch in
    select t.queue_name, array_agg(t.step_slug order by t.step_slug, t.task_index) as slugs,
           array_agg(t.task_index order by t.step_slug, t.task_index) as indexes
    from pgflow.step_tasks t
    where t.run_id = v_run.run_id and t.status = 'queued' and t.message_id is null
    group by t.queue_name
    order by t.queue_name
  loop
    update pgflow.step_tasks t set message_id = m.msg_id
    from pgmq.send_batch(
           v_batch.queue_name,
           array(select jsonb_build_object('flow_slug', v_run.flow_slug, 'run_id', v_run.run_id,
                                           'step_slug', x.step_slug, 'task_index', x.task_index)
                 from unnest(v_batch.slugs, v_batch.indexes) with ordinality x(step_slug, task_index, n)
                 order by x.n),
           0) with ordinality as m(msg_id, n)
    where t.run_id = v_run.run_id and t.step_slug = v_batch.slugs[m.n] and t.task_index = v_batch.indexes[m.n];
    perform pgflow._announce_work(v_batch.queue_name);
  end loop;

  perform pgflow._advance_run(v_run.run_id);
  select * into v_run from pgflow.runs r where r.run_id = v_run.run_id;
  return v_run;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.resume_run(uuid) from public;
