-- The queue-aware claim boundary: claims a batch of messages a worker read from `queue_name`
-- for `flow_slug` (and, for a flow in queue mode `step`, its step `step_slug`: the exact step
-- selector), one pgflow.claim_record per message.
--
-- The worker's subscription is validated first: a registered worker on this queue; in queue
-- mode `flow` no step and the flow's queue; in mode `step` a step whose private queue this is
-- (the exact flow/step/queue route must exist). Then every message is looked up by
-- (queue_name, message_id) and the complete batch is classified before anything changes.
-- Without a fatal message, one transaction claims the eligible tasks (visible again after the
-- step's effective timeout + 2 s), defers running ones, leaves a held task's message invisible
-- (a concurrency limit's waiting task, since 0018), and archives finished or clearly foreign
-- messages. With any fatal message - pgflow-shaped work whose task is missing or on another
-- route (another flow or step) - nothing is claimed or archived: the whole
-- batch is made visible again, the worker's function is paused (pgflow.worker_functions), and
-- the fatal outcome is returned (not raised, so the reset and the pause commit). A message is
-- "clearly foreign" only when its body carries none of pgflow's address keys (flow_slug,
-- run_id, step_slug, task_index); anything else without a matching task is fatal.
-- Applications must not send messages to pgflow-owned queues.
--
-- Steps: 1. the subscription; 1a. a released claim claims nothing; 1b. a paused worker
-- function claims nothing; 2. classify the batch (_classify_claim_batch); 3a. a fatal batch:
-- reset, pause, report (_refuse_claim_batch); 3b. claim (one UPDATE since 0015), 3c. defer,
-- 3c'. hold, 3d. archive; 4. one row per message.
-- Plans: tasks and runs are reached by row address (ctid) or by index probes per message, never
-- by joins planned from statistics, which a burst of work makes stale (bench/README.md).
-- `claim_id` (worker protocol 6, schema 0014) is an id the worker chose for this call: the
-- claimed tasks record it (step_tasks.last_claim_id), so a worker whose connection broke before
-- the reply arrived can give them back at once (release_claim) instead of leaving them to stall
-- recovery. A claim id given back before its claim began claims nothing (since 0030). The
-- overload without it (protocols 4 and 5, start_tasks) records none.
-- Locks: queue rows (the caller's pgmq.read) -> the worker's claim fence FOR KEY SHARE (with a
-- claim id and messages read) -> runs FOR SHARE (run_id order) -> task rows.
-- The one place a lock is waited for out of order (sql/schema/README.md, "Lock order"): no
-- holder of a run ever waits for a queue row.
-- Called by: workers (one round trip with pgmq.read), start_tasks.
create or replace function pgflow.claim_tasks(queue_name text, flow_slug text, msg_ids bigint[], worker_id uuid,
                                              step_slug text, claim_id uuid)
returns setof pgflow.claim_record
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_queue text := lower(claim_tasks.queue_name);
  v_worker pgflow.workers;
  v_flow pgflow.flows;
  v_ids bigint[] := array(select distinct i from unnest(msg_ids) i where i is not null order by i);
  v_items pgflow._claim_item[];
  v_claim bigint[];
  v_defer bigint[];
  v_defer_offsets int[];
  v_held bigint[];
  v_archive bigint[];
  v_visible int;
  v_released uuid[];
begin
  -- 1. The subscription, before judging any message.
  select * into v_worker from pgflow.workers w where w.worker_id = claim_tasks.worker_id;
  if not found then
    raise exception 'Worker % is not registered (register_worker)', claim_tasks.worker_id
      using errcode = 'no_data_found';
  end if;
  if v_worker.queue_name is distinct from v_queue then
    raise exception 'Worker % is registered for queue "%", not "%"', claim_tasks.worker_id,
      v_worker.queue_name, v_queue using errcode = 'invalid_parameter_value';
  end if;
  select * into v_flow from pgflow.flows f where f.flow_slug = claim_tasks.flow_slug;
  if not found then
    -- e.g. deleted while the worker polled
    raise exception 'Flow "%" does not exist', claim_tasks.flow_slug using errcode = 'no_data_found';
  end if;
  if v_flow.queue_mode = 'step' then
    if claim_tasks.step_slug is null then
      raise exception 'Flow "%" has one queue per step: a claim must name its step (claim_tasks(..., step_slug))',
        claim_tasks.flow_slug using errcode = 'invalid_parameter_value';
    end if;
    if not exists (select 1 from pgflow.steps s
                   where s.flow_slug = claim_tasks.flow_slug and s.step_slug = claim_tasks.step_slug
                     and s.queue_name = v_queue) then
      raise exception 'Queue "%" is not the queue of step "%" of flow "%"', v_queue,
        claim_tasks.step_slug, claim_tasks.flow_slug using errcode = 'invalid_parameter_value';
    end if;
  else
    if claim_tasks.step_slug is not null then
      raise exception 'Flow "%" has one queue for all its steps: a claim names no step (got "%")',
        claim_tasks.flow_slug, claim_tasks.step_slug using errcode = 'invalid_parameter_value';
    end if;
    if lower(claim_tasks.flow_slug) <> v_queue then
      raise exception 'Queue "%" is not on the route of flow "%"', v_queue, claim_tasks.flow_slug
        using errcode = 'invalid_parameter_value';
    end if;
  end if;
  if cardinality(v_ids) = 0 then
    return;
  end if;
  -- 1a. A claim its worker gave back (release_claim) claims nothing (since 0030): its reply was
  -- lost and the worker went on without it. The worker's fence row orders this check against
  -- release_claim (FOR KEY SHARE here, FOR UPDATE there; under REPEATABLE READ a release that
  -- committed while this waited is a serialization failure). An empty read returned above, so
  -- an idle poll still writes nothing. The messages read are visible again, and announced.
  if claim_tasks.claim_id is not null then
    select f.released_claim_ids into v_released from pgflow.claim_fences f
    where f.worker_id = claim_tasks.worker_id for key share;
    if claim_tasks.claim_id = any(v_released) then
      perform pgflow.set_vt_batch(v_queue, v_ids, array_fill(0, array[cardinality(v_ids)]));
      perform pgflow._announce_work(v_queue);
      return;
    end if;
  end if;
  -- 1b. A paused worker function (`pgflow workers pause`, or a fatal claim) claims nothing, so
  -- its running workers stop taking work (since 0026): what they read is visible again at once
  -- and nothing is returned, as for an empty queue. Its tasks stay queued until it is resumed.
  if exists (select 1 from pgflow.worker_functions f
             where f.function_name = v_worker.function_name and f.paused_at is not null) then
    perform pgflow.set_vt_batch(v_queue, v_ids, array_fill(0, array[cardinality(v_ids)]));
    return;
  end if;

  -- 2. The complete batch, classified before anything changes (locks the runs behind it).
  v_items := pgflow._classify_claim_batch(v_queue, claim_tasks.flow_slug, claim_tasks.step_slug, v_ids);

  -- 3a. A fatal batch: nothing is claimed or archived.
  if exists (select 1 from unnest(v_items) c where c.class = 'fatal') then
    return query select * from pgflow._refuse_claim_batch(v_queue, v_worker.function_name, v_items);
    return;
  end if;

  -- 3b. Claim the eligible tasks in one statement, each by row address (a TID scan per item:
  -- no plan to go wrong), in msg_id order; a task changed since it was classified no longer
  -- matches, and counts as taken.
  with claimed as (
    update pgflow.step_tasks t
    -- greatest(): a task committed after this transaction began is queued "later" than now().
    set status = 'started', attempts_count = t.attempts_count + 1,
        started_at = greatest(now(), t.queued_at),
        last_worker_id = claim_tasks.worker_id, last_claim_id = claim_tasks.claim_id
    from unnest(v_items) c
    where c.class = 'claim' and t.ctid = c.task_ctid and t.status = 'queued'
    returning c.msg_id)
  select coalesce(array_agg(k.msg_id order by k.msg_id), '{}') into v_claim from claimed k;
  v_items := array(
    select case when c.class = 'claim' and not c.msg_id = any(v_claim)
             then row(c.msg_id, 'taken', 'claimed by another worker meanwhile', c.run_id,
                      c.step_slug, c.task_index, c.deadline, c.task_ctid)::pgflow._claim_item
             else c end
    from unnest(v_items) c order by c.msg_id);

  if cardinality(v_claim) > 0 then
    select count(*) into v_visible
    from pgflow.set_vt_batch(v_queue, v_claim, array(
      select coalesce(s.opt_timeout, f.opt_timeout) + 2
      from unnest(v_claim) with ordinality as k(id, n)
      join unnest(v_items) c on c.msg_id = k.id
      join pgflow.steps s on s.flow_slug = claim_tasks.flow_slug and s.step_slug = c.step_slug
      join pgflow.flows f on f.flow_slug = claim_tasks.flow_slug
      order by k.n));
    if v_visible <> cardinality(v_claim) then
      raise exception 'claim_tasks(): visibility updated % of % claimed messages',
        v_visible, cardinality(v_claim);
    end if;
  end if;

  -- 3c. Defer running tasks to their recovery deadline (not a fresh timeout per read).
  select array_agg(c.msg_id order by c.msg_id),
         array_agg(greatest(ceil(extract(epoch from c.deadline - clock_timestamp()))::int, 5)
                   order by c.msg_id)
  into v_defer, v_defer_offsets
  from unnest(v_items) c where c.class = 'defer';
  if v_defer is not null then
    perform pgflow.set_vt_batch(v_queue, v_defer, v_defer_offsets);
  end if;

  -- 3c'. A held task's message (named without being read) stays invisible until admitted.
  select array_agg(c.msg_id order by c.msg_id) into v_held from unnest(v_items) c where c.class = 'held';
  if v_held is not null then
    execute format('update pgmq.%I q set vt = ''infinity'' where q.msg_id = any($1)', 'q_' || v_queue)
    using v_held;
  end if;

  -- 3d. Archive messages of finished tasks and clearly foreign messages.
  select array_agg(c.msg_id order by c.msg_id) into v_archive
  from unnest(v_items) c where c.class = 'archive';
  if v_archive is not null then
    perform pgmq.archive(v_queue, v_archive);
  end if;

  -- 4. One row per message; claimed tasks carry their input (see pgflow.step_task_record).
  return query
  select case c.class when 'claim' then 'claimed' when 'defer' then 'deferred'
                      when 'archive' then 'archived' else c.class end,
         v_queue, c.msg_id, t.flow_slug, t.run_id, t.step_slug, t.task_index,
         case when c.class = 'claim' then t.attempts_count end,
         case when c.class <> 'claim' then null
           when s.step_type = 'map' and s.deps_count = 0 then r.input -> t.task_index
           when s.step_type = 'map' then (
             select ds.output -> t.task_index
             from pgflow.deps d
             join pgflow.step_states ds on ds.run_id = t.run_id and ds.step_slug = d.dep_slug
             where d.flow_slug = t.flow_slug and d.step_slug = t.step_slug)
           when s.deps_count = 0 then '{}'::jsonb
           else coalesce((
             select jsonb_object_agg(d.dep_slug, ds.output)
             from pgflow.deps d
             join pgflow.step_states ds on ds.run_id = t.run_id and ds.step_slug = d.dep_slug
             where d.flow_slug = t.flow_slug and d.step_slug = t.step_slug
               and ds.status = 'completed'), '{}'::jsonb)
         end,
         case when c.class = 'claim' and s.step_type = 'single' and s.deps_count = 0 then r.input end,
         c.reason,
         case when c.class = 'claim' then coalesce(s.opt_timeout, f.opt_timeout) end
  from unnest(v_items) c
  left join lateral (select t.* from pgflow.step_tasks t
                     where t.run_id = c.run_id and t.step_slug = c.step_slug
                       and t.task_index = c.task_index limit 1) t on true
  left join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  left join pgflow.flows f on f.flow_slug = t.flow_slug
  left join lateral (select r.input from pgflow.runs r where r.run_id = t.run_id limit 1) r on true
  order by c.msg_id;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.claim_tasks(text, text, bigint[], uuid, text, uuid) from public;

create or replace function pgflow.claim_tasks(queue_name text, flow_slug text, msg_ids bigint[], worker_id uuid,
                                              step_slug text default null)
returns setof pgflow.claim_record
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
  select * from pgflow.claim_tasks(queue_name, flow_slug, msg_ids, worker_id, step_slug, null::uuid)
$$;

revoke execute on function pgflow.claim_tasks(text, text, bigint[], uuid, text) from public;
