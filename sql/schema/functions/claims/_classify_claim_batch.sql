-- Classifies every message of a claim batch, changing nothing. Each message is looked up by
-- (queue_name, message_id); its body is read only when no task has that identity. The first
-- rule that applies decides:
--   fatal    its task belongs to another flow, or to another step than the claim's (wrong route)
--   held     its task waits for a slot under a concurrency limit (since 0018; a held task has
--            had no message since 0022, so this guards against one that was given one by hand)
--   claim    its task is queued in a started step of a started run
--   fatal    its task is queued but its run or step is not started (inconsistent state)
--   defer    its task is already running (deadline: when stall recovery would take it)
--   archive  its task is finished or can never run
--   gone     no such message and no task
--   archive  the body names a task of this queue (run_id, step_slug, task_index) that has
--            another message now (since 0027): a superseded copy - the run was cancelled
--            while a reader held this message locked (so it was not archived) and resumed
--            (which gave the task a new message). Before 0027 it was fatal and paused the
--            worker function
--   fatal    the body carries a pgflow task address (flow_slug, run_id, step_slug or
--            task_index) but no task of this queue has that address or this identity: pgflow
--            work this worker cannot judge
--   archive  anything else: clearly not pgflow's
-- Returns the items in msg_id order, each with its task's row address (ctid) for the claim.
-- Locks: the runs behind the batch FOR SHARE, in run_id order (lock order position 2), so
-- their state cannot change before the claim commits.
-- Called by: claim_tasks.
create or replace function pgflow._classify_claim_batch(p_queue_name text, p_flow_slug text,
                                                        p_step_slug text, p_msg_ids bigint[])
returns pgflow._claim_item[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_runs uuid[];
  v_body_ids bigint[];
  v_bodies jsonb[];
  v_stale_ids bigint[];
  v_current_ids bigint[];
  v_items pgflow._claim_item[];
begin
  -- Every lookup below is an index probe per message or row (LATERAL ... LIMIT 1, = ANY): a
  -- join planned from statistics goes wrong when a burst of work arrived since they were taken
  -- (it scans every task of the queue, or every run, on each claim).
  v_runs := array(select distinct t.run_id
                  from unnest(p_msg_ids) as m(id)
                  cross join lateral (select t.run_id from pgflow.step_tasks t
                                      where t.queue_name = p_queue_name and t.message_id = m.id
                                      limit 1) t);
  perform 1 from pgflow.runs r where r.run_id = any(v_runs) order by r.run_id for share;

  -- Bodies are judged only for messages without a task (foreign or unsupported work); the
  -- usual batch has none, and then no dynamic statement is needed.
  v_body_ids := array(select m.id from unnest(p_msg_ids) as m(id)
                      left join lateral (select true as found from pgflow.step_tasks t
                                         where t.queue_name = p_queue_name and t.message_id = m.id
                                         limit 1) t on true
                      where t.found is null);
  if cardinality(v_body_ids) > 0 then
    execute format('select array_agg(q.msg_id), array_agg(q.message) from pgmq.%I q where q.msg_id = any($1)',
                   'q_' || p_queue_name)
    into v_body_ids, v_bodies using v_body_ids;
    -- Superseded copies (rule 9): bodies naming a task of this queue, which has another
    -- message now. Only well-formed addresses are looked up (no cast may raise); one
    -- primary-key probe each.
    select array_agg(b.msg_id), array_agg(t.message_id)
    into v_stale_ids, v_current_ids
    from unnest(v_body_ids, v_bodies) as b(msg_id, message)
    cross join lateral (
      select t.message_id from pgflow.step_tasks t
      where jsonb_typeof(b.message) = 'object'
        and t.run_id = case when b.message->>'run_id'
                                   ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$'
                              then (b.message->>'run_id')::uuid end
        and t.step_slug = b.message->>'step_slug'
        and t.task_index = case when jsonb_typeof(b.message->'task_index') = 'number'
                                       and b.message->>'task_index' ~ '^[0-9]{1,9}$'
                                  then (b.message->>'task_index')::int end
        and t.queue_name = p_queue_name
      limit 1) t;
  end if;

  select array_agg(row(m.id, rule.class, rule.reason, t.run_id, t.step_slug, t.task_index,
                       t.started_at + make_interval(secs => coalesce(s.opt_timeout, f.opt_timeout) + 30),
                       t.ctid)::pgflow._claim_item order by m.id)
  into v_items
  from unnest(p_msg_ids) as m(id)
  left join lateral (select t.ctid, t.* from pgflow.step_tasks t
                     where t.queue_name = p_queue_name and t.message_id = m.id limit 1) t on true
  left join lateral (select r.status from pgflow.runs r where r.run_id = t.run_id limit 1) r on true
  left join lateral (select ss.status from pgflow.step_states ss
                     where ss.run_id = t.run_id and ss.step_slug = t.step_slug limit 1) ss on true
  left join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  left join pgflow.flows f on f.flow_slug = t.flow_slug
  left join unnest(v_body_ids, v_bodies) as b(msg_id, message) on b.msg_id = m.id
  left join unnest(v_stale_ids, v_current_ids) as sup(msg_id, message_id) on sup.msg_id = m.id
  cross join lateral (
    select v.class, v.reason
    from (values
      (1, t.run_id is not null and t.flow_slug <> p_flow_slug, 'fatal',
          format('its task belongs to flow "%s", not to this worker''s flow', t.flow_slug)),
      (2, t.run_id is not null and t.step_slug <> p_step_slug, 'fatal',
          format('its task belongs to step "%s", not to this worker''s step "%s"', t.step_slug, p_step_slug)),
      (3, t.status = 'queued' and t.gate = 'held', 'held',
          'its task waits for a slot under a concurrency limit'),
      (4, t.status = 'queued' and r.status = 'started' and ss.status = 'started', 'claim', null),
      (5, t.status = 'queued', 'fatal',
          format('its task is queued but its run is %s and its step %s (inconsistent state)',
                 r.status, ss.status)),
      (6, t.status = 'started', 'defer', 'its task is already running'),
      (7, t.run_id is not null, 'archive', format('its task is %s', t.status)),
      (8, b.msg_id is null, 'gone', 'no such message'),
      (9, sup.msg_id is not null, 'archive',
          format('stale: its task has %s now (a superseded copy)',
                 coalesce('message ' || sup.message_id, 'no message'))),
      (10, jsonb_typeof(b.message) = 'object'
          and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index'],
          'fatal', 'it looks like pgflow work but no task has this (queue, message id)'),
      (11, true, 'archive', 'foreign message without a pgflow task address')
    ) as v(rank, applies, class, reason)
    where v.applies
    order by v.rank
    limit 1) rule;
  return v_items;
end;
$$;
