-- pgflow SQL core, 0023: one place sends messages to tasks that exist already.
--
-- An admission (pgflow._admit_tasks, since 0022) and a resumption (pgflow.resume_run) each
-- wrote the same steps: send a batch of task messages to a queue, record each task's message id
-- from the ids send_batch returns in message order, and announce the work when it is visible at
-- once. Both now call pgflow._send_task_messages(queue, flow, runs, steps, indexes, delay),
-- which does this in one statement (a held task that gets its message is admitted by it, as
-- _admit_tasks did). _admit_tasks also computes what is left of a task's start delay in one
-- place (its two task pickers carried the same expression). Behaviour is unchanged: the same
-- messages, in the same order, to the same queues, at the same times.
--
-- Data: none. Locks: none beyond replacing two functions and creating one. Applied by the
-- pgflow migration runner in one transaction. Immutable once released.

set local check_function_bodies = off;

-- ---- sql/schema/functions/limits/_admit_tasks.sql
-- Gives waiting ('held') tasks of one limited flow the slots its limits leave free: a task is
-- admitted while its step has room (steps without a limit always do) and the flow has room (a
-- flow without a flow-wide limit always does). Which tasks: in a step without a concurrency
-- key, highest run priority first, then oldest first (queued_at, then run and task); under a
-- flow limit, across such steps in that order. Then, in steps with a key (since 0019), one
-- task at a time for the key value the stride order picks (concurrency_keys: lowest pass, then
-- served longest ago), the value's highest-priority, oldest task, within the value's key limit;
-- 1 / its weight is added to the value's pass. So a flow limit's free slots go to unkeyed
-- steps first. A held task has no message (since 0022: held messages in the queue made every
-- claim that asked for more than was admitted walk past all of them); the admission sends the
-- admitted tasks' messages, visible when their step's start_delay, counted from when the task
-- was queued, has passed (at once, announced, in the common case). A slot is held from
-- admission until the task ends (completed, failed, skipped, cancelled), retries and stall
-- recovery included; its count is taken from the tasks themselves, so it cannot drift.
-- Key values: `p_keys` ([[step, key], ...]) are the values of tasks the committing transaction
-- queued held: each becomes active (pass: the lowest active pass of its scope) if it is not. A
-- value the stride order picks with no waiting task goes idle. The sweep's call (p_wait false)
-- activates every value that has waiting tasks (what a commit outside READ COMMITTED left) and
-- deletes idle rows.
-- Concurrency: admissions of one flow queue on its gate row, which each one updates (taking a
-- turn), and count after taking it, so each sees every earlier admission (READ COMMITTED: the
-- callers never admit under another isolation level); concurrency_keys rows are written only
-- here, under it. With p_wait false a gate another transaction holds is skipped instead. Held
-- tasks are taken FOR UPDATE SKIP LOCKED: a task some transaction is changing (cancelling its
-- run) is left to that one, never waited for; an admission it skips is made by the next one
-- (every transaction that queues a held task or frees a slot runs one; stall recovery sweeps:
-- _admit_waiting_tasks).
-- Locks: the gate row -> key value rows -> held task rows (never waited for); the messages it
-- sends are new queue rows, which nobody else holds.
-- Called by: _admit_gated_tasks (at commit), _admit_waiting_tasks (p_wait false).
create or replace function pgflow._admit_tasks(p_flow_slug text, p_wait boolean default true,
                                               p_keys jsonb default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_gate pgflow.concurrency_gates;
  v_flow_room int;
  v_batch record;
  v_scope record;
  v_steps text[];
  v_room int[];
  v_skip text[];
  v_key pgflow.concurrency_keys;
  v_task record;
  -- The admitted tasks, in admission order: their runs, steps, indexes, queues, when they were
  -- queued and their steps' start delays.
  v_runs uuid[];
  v_slugs text[];
  v_indexes int[];
  v_queues text[];
  v_queued_at timestamptz[];
  v_start_delays int[];
begin
  if p_wait then
    update pgflow.concurrency_gates g set turn = g.turn + 1
    where g.flow_slug = p_flow_slug
    returning g.* into v_gate;
  else
    update pgflow.concurrency_gates g set turn = g.turn + 1
    where g.flow_slug = (select k.flow_slug from pgflow.concurrency_gates k
                         where k.flow_slug = p_flow_slug for update skip locked)
    returning g.* into v_gate;
  end if;
  if not found then
    return;  -- the flow was deleted, or (p_wait false) another transaction is admitting
  end if;
  if v_gate.has_keys then
    perform pgflow._activate_keys(v_gate, p_keys, not p_wait);
  end if;
  v_flow_room := coalesce(v_gate.flow_limit - (select count(*) from pgflow.step_tasks t
                                               where t.flow_slug = p_flow_slug and t.gate = 'admitted'
                                                 and t.status in ('queued', 'started')),
                          2147483647);
  if v_flow_room <= 0 then
    return;
  end if;

  -- Steps without a key: picked in one statement (locked; changed below, with their messages).
  with holding as (
    select t.step_slug, count(*) as slots
    from pgflow.step_tasks t
    where t.flow_slug = p_flow_slug and t.gate = 'admitted' and t.status in ('queued', 'started')
    group by t.step_slug),
  room as (
    select s.step_slug, s.opt_start_delay,
           least(v_flow_room, coalesce(l.step_limit - coalesce(h.slots, 0), v_flow_room)) as free
    from pgflow.steps s
    left join pgflow.step_concurrency_limits l on l.flow_slug = s.flow_slug and l.step_slug = s.step_slug
    left join holding h on h.step_slug = s.step_slug
    where s.flow_slug = p_flow_slug and s.concurrency_limited
      and coalesce(l.key_path, v_gate.key_path) is null),
  candidates as (
    select c.run_id, c.step_slug, c.task_index, c.priority, c.queued_at, c.queue_name, r.opt_start_delay
    from room r
    cross join lateral (
      select t.run_id, t.step_slug, t.task_index, t.priority, t.queued_at, t.queue_name
      from pgflow.step_tasks t
      where t.flow_slug = p_flow_slug and t.step_slug = r.step_slug
        and t.gate = 'held' and t.status = 'queued'
      order by t.priority desc, t.queued_at, t.run_id, t.task_index
      limit greatest(r.free, 0)
      for update skip locked) c),
  picked as (
    select c.*, row_number() over (order by c.priority desc, c.queued_at, c.run_id, c.step_slug, c.task_index) as n
    from candidates c
    order by n
    limit v_flow_room)
  select coalesce(array_agg(p.run_id order by p.n), '{}'),
         coalesce(array_agg(p.step_slug order by p.n), '{}'),
         coalesce(array_agg(p.task_index order by p.n), '{}'),
         coalesce(array_agg(p.queue_name order by p.n), '{}'),
         coalesce(array_agg(p.queued_at order by p.n), '{}'),
         coalesce(array_agg(p.opt_start_delay order by p.n), '{}')
  into v_runs, v_slugs, v_indexes, v_queues, v_queued_at, v_start_delays
  from picked p;
  v_flow_room := v_flow_room - cardinality(v_runs);

  -- Steps with a key: one task at a time, for the value the stride order picks, per scope (a
  -- step's own key; the flow's key over the steps that use it).
  for v_scope in
    select x.scope, x.key_limit, array_agg(x.step_slug order by x.step_slug collate "C") as steps
    from (select s.step_slug, case when l.key_path is not null then s.step_slug else '' end as scope,
                 case when l.key_path is not null then l.key_limit else v_gate.key_limit end as key_limit
          from pgflow.steps s
          left join pgflow.step_concurrency_limits l on l.flow_slug = s.flow_slug and l.step_slug = s.step_slug
          where v_gate.has_keys and s.flow_slug = p_flow_slug and s.concurrency_limited
            and coalesce(l.key_path, v_gate.key_path) is not null) x
    group by x.scope, x.key_limit
    order by x.scope collate "C"
  loop
    exit when v_flow_room <= 0;
    select array_agg(r.step_slug order by r.step_slug collate "C"),
           array_agg(least(v_flow_room, r.free) order by r.step_slug collate "C")
    into v_steps, v_room
    from (select s.step_slug,
                 coalesce(l.step_limit - (select count(*) from pgflow.step_tasks t
                                          where t.flow_slug = p_flow_slug and t.step_slug = s.step_slug
                                            and t.gate = 'admitted' and t.status in ('queued', 'started')),
                          2147483647) as free
          from unnest(v_scope.steps) s(step_slug)
          left join pgflow.step_concurrency_limits l on l.flow_slug = p_flow_slug and l.step_slug = s.step_slug) r;
    v_skip := '{}';
    while v_flow_room > 0 and 0 < any(v_room) loop
      select k.* into v_key from pgflow.concurrency_keys k
      where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.pass is not null
        and k.key <> all(v_skip)
      order by k.pass, k.last_turn nulls first, k.key
      limit 1;
      exit when not found;
      v_skip := v_skip || v_key.key;
      if v_scope.key_limit is not null
         and (select count(*) from pgflow.step_tasks t
              where t.flow_slug = p_flow_slug and t.gate = 'admitted' and t.status in ('queued', 'started')
                and t.concurrency_key = v_key.key and t.step_slug = any(v_scope.steps))
             >= v_scope.key_limit then
        continue;  -- at its key limit: its tasks wait
      end if;
      select t.run_id, t.step_slug, t.task_index, t.key_weight, t.queue_name, t.queued_at, s.opt_start_delay
      into v_task
      from unnest(v_steps, v_room) r(step_slug, free)
      join pgflow.steps s on s.flow_slug = p_flow_slug and s.step_slug = r.step_slug
      cross join lateral (
        select t.run_id, t.step_slug, t.task_index, t.priority, t.queued_at, t.key_weight, t.queue_name
        from pgflow.step_tasks t
        where t.flow_slug = p_flow_slug and t.step_slug = r.step_slug and t.concurrency_key = v_key.key
          and t.gate = 'held' and t.status = 'queued'
        order by t.priority desc, t.queued_at, t.run_id, t.task_index
        limit 1
        for update skip locked) t
      where r.free > 0
      order by t.priority desc, t.queued_at, t.run_id, t.step_slug, t.task_index
      limit 1;
      if not found then
        -- Nothing waiting (a task locked by another transaction counts as waiting): idle until
        -- a commit queues one again.
        if not exists (select 1 from unnest(v_steps) r(step_slug)
                       join pgflow.step_tasks t on t.flow_slug = p_flow_slug and t.step_slug = r.step_slug
                       where t.concurrency_key = v_key.key and t.gate = 'held' and t.status = 'queued') then
          update pgflow.concurrency_keys k set pass = null
          where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.key = v_key.key;
        end if;
        continue;
      end if;
      -- (Admitted here, as the key limit above counts them; its message is sent below.)
      update pgflow.step_tasks t set gate = 'admitted'
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug and t.task_index = v_task.task_index;
      v_runs := v_runs || v_task.run_id;
      v_slugs := v_slugs || v_task.step_slug;
      v_indexes := v_indexes || v_task.task_index;
      v_queues := v_queues || v_task.queue_name;
      v_queued_at := v_queued_at || v_task.queued_at;
      v_start_delays := v_start_delays || v_task.opt_start_delay;
      update pgflow.concurrency_keys k
      set pass = k.pass + 1.0 / coalesce(v_task.key_weight, 1), last_turn = v_gate.turn
      where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.key = v_key.key;
      v_room[array_position(v_steps, v_task.step_slug)] := v_room[array_position(v_steps, v_task.step_slug)] - 1;
      v_flow_room := v_flow_room - 1;
      v_skip := array_remove(v_skip, v_key.key);  -- it may be picked again
    end loop;
  end loop;

  -- The admitted tasks' messages, one batch per queue and delay (what is left of the step's
  -- start_delay, counted from when the task was queued), in admission order.
  for v_batch in
    select m.queue_name, m.delay,
           array_agg(m.run_id order by m.n) as runs, array_agg(m.step_slug order by m.n) as slugs,
           array_agg(m.task_index order by m.n) as indexes
    from (select u.*,
                 greatest(0, ceil(extract(epoch from u.queued_at + make_interval(secs => coalesce(u.start_delay, 0))
                                                     - clock_timestamp())))::int as delay
          from unnest(v_queues, v_queued_at, v_start_delays, v_runs, v_slugs, v_indexes) with ordinality
               u(queue_name, queued_at, start_delay, run_id, step_slug, task_index, n)) m
    group by m.queue_name, m.delay
    order by m.queue_name, m.delay
  loop
    perform pgflow._send_task_messages(v_batch.queue_name, p_flow_slug, v_batch.runs, v_batch.slugs,
                                       v_batch.indexes, v_batch.delay);
  end loop;
end;
$$;

-- ---- sql/schema/functions/queues/_send_task_messages.sql
-- Sends queued tasks their messages, one each, to one queue, in the order given (a claim reads
-- in message order), visible after p_delay seconds; records each task's message id, and a held
-- task that gets its message is admitted with it (held tasks have no message: since 0022).
-- Announces the work when it is visible at once. The tasks of a started step get theirs as
-- they are inserted (_enqueue_step_tasks, planned once per session); this sends messages to
-- tasks that exist already.
-- Locks: the caller holds the task rows; the messages are new queue rows.
-- Called by: _admit_tasks (admitted tasks), resume_run (tasks queued again).
create or replace function pgflow._send_task_messages(p_queue_name text, p_flow_slug text,
                                                      p_runs uuid[], p_slugs text[], p_indexes int[],
                                                      p_delay int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_messages bigint[];
begin
  -- send_batch returns the ids in message order, so ordinality pairs each id with its task.
  -- (The tasks are updated from arrays, probed by key: joined with send_batch's result, which
  -- the planner estimates at 1,000 rows, the update could scan step_tasks.)
  v_messages := array(
    select m.msg_id
    from pgmq.send_batch(
           p_queue_name,
           array(select jsonb_build_object('flow_slug', p_flow_slug, 'run_id', x.run_id,
                                           'step_slug', x.step_slug, 'task_index', x.task_index)
                 from unnest(p_runs, p_slugs, p_indexes) with ordinality x(run_id, step_slug, task_index, n)
                 order by x.n),
           null::jsonb[],
           clock_timestamp() + make_interval(secs => p_delay)) with ordinality m(msg_id, n)
    order by m.n);
  update pgflow.step_tasks t
  set message_id = u.msg_id,
      gate = case when t.gate = 'held' then 'admitted' else t.gate end
  from unnest(p_runs, p_slugs, p_indexes, v_messages) u(run_id, step_slug, task_index, msg_id)
  where t.run_id = u.run_id and t.step_slug = u.step_slug and t.task_index = u.task_index;
  if p_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/resume_run.sql
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
-- stall recovery). SECURITY DEFINER: only granted roles may call it.
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
  perform pgflow._emit_run_event(v_run);
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
      perform pgflow._emit_step_event(v_state);
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
    v_state.status := 'waiting';
    perform pgflow._emit_step_event(v_state);
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
