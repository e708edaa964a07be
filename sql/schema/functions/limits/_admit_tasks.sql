-- Gives waiting ('held') tasks of one limited flow the slots its limits leave free, highest
-- run priority first, then oldest first (queued_at, then run and task; a task whose message is
-- not sent yet waits for it): a
-- task is admitted while its step has room (steps
-- without a limit always do) and the flow has room (a flow without a flow-wide limit always
-- does). An admitted task's message becomes visible when its step's start_delay, counted from
-- when the task was queued, has passed (at once, announced, in the common case). A slot is
-- held from admission until the task ends (completed, failed, skipped, cancelled), retries
-- and stall recovery included; its count is taken from the tasks themselves, so it cannot
-- drift.
-- Concurrency: admissions of one flow queue on its gate row, which each one updates, and count
-- after taking it, so each sees every earlier admission (READ COMMITTED: the callers never
-- admit under another isolation level). With p_wait false a gate another transaction holds is
-- skipped instead. Held tasks are taken FOR UPDATE SKIP LOCKED: a task some transaction is
-- changing (cancelling its run) is left to that one, never waited for; an admission it skips
-- is made by the next one (every transaction that queues a held task or frees a slot runs
-- one; stall recovery sweeps: _admit_waiting_tasks).
-- Locks: the gate row -> held task rows (never waited for) -> their queue rows.
-- Called by: _admit_gated_tasks (at commit), _admit_waiting_tasks (p_wait false).
create or replace function pgflow._admit_tasks(p_flow_slug text, p_wait boolean default true)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flow_limit int;
  v_flow_room int;
  v_batch record;
begin
  if p_wait then
    update pgflow.concurrency_gates g set flow_limit = g.flow_limit
    where g.flow_slug = p_flow_slug
    returning g.flow_limit into v_flow_limit;
  else
    update pgflow.concurrency_gates g set flow_limit = g.flow_limit
    where g.flow_slug = (select k.flow_slug from pgflow.concurrency_gates k
                         where k.flow_slug = p_flow_slug for update skip locked)
    returning g.flow_limit into v_flow_limit;
  end if;
  if not found then
    return;  -- the flow was deleted, or (p_wait false) another transaction is admitting
  end if;
  v_flow_room := coalesce(v_flow_limit - (select count(*) from pgflow.step_tasks t
                                          where t.flow_slug = p_flow_slug and t.gate = 'admitted'
                                            and t.status in ('queued', 'started')),
                          2147483647);
  if v_flow_room <= 0 then
    return;
  end if;

  for v_batch in
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
      where s.flow_slug = p_flow_slug),
    candidates as (
      select c.run_id, c.step_slug, c.task_index, c.priority, c.queued_at, r.opt_start_delay
      from room r
      cross join lateral (
        select t.run_id, t.step_slug, t.task_index, t.priority, t.queued_at
        from pgflow.step_tasks t
        where t.flow_slug = p_flow_slug and t.step_slug = r.step_slug
          and t.gate = 'held' and t.status = 'queued' and t.message_id is not null
        order by t.priority desc, t.queued_at, t.run_id, t.task_index
        limit greatest(r.free, 0)
        for update skip locked) c),
    picked as (
      select * from candidates c
      order by c.priority desc, c.queued_at, c.run_id, c.step_slug, c.task_index
      limit v_flow_room),
    admitted as (
      update pgflow.step_tasks t set gate = 'admitted'
      from picked p
      where t.run_id = p.run_id and t.step_slug = p.step_slug and t.task_index = p.task_index
      returning t.queue_name, t.message_id,
                greatest(0, ceil(extract(epoch from t.queued_at + make_interval(secs => coalesce(p.opt_start_delay, 0))
                                                    - clock_timestamp())))::int as delay)
    select a.queue_name, array_agg(a.message_id order by a.message_id) as ids,
           array_agg(a.delay order by a.message_id) as delays
    from admitted a
    group by a.queue_name
    order by a.queue_name
  loop
    perform pgflow.set_vt_batch(v_batch.queue_name, v_batch.ids, v_batch.delays);
    if 0 = any(v_batch.delays) then
      perform pgflow._announce_work(v_batch.queue_name);
    end if;
  end loop;
end;
$$;
