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
