-- pgflow SQL core, 0030: a lost claim is given back even when it had not ended.
--
-- A worker whose connection broke before a claim's reply arrived gives the claim back at once
-- (release_claim, since 0014): the tasks it started are queued again rather than left to stall
-- recovery. But the claim may not have ended yet, or not even begun, when the worker's next
-- connection gives it back: its query can still be on its way to a server backend, or running
-- there. release_claim then found nothing, and the claim committed afterwards: its tasks
-- waited for stall recovery (the step's timeout + 30 s) under a worker that was alive and did
-- not know it held them. The fault soak caught it (a cut of every connection mid-claim).
--   * pgflow.claim_fences (worker_id, released_claim_ids): one row per worker, created by
--     register_worker (and below for the workers registered already). release_claim locks it
--     FOR UPDATE, adds the claim id (the last 100 are kept), and only then looks for the
--     claim's tasks; claim_tasks, with a claim id and messages read, locks it FOR KEY SHARE and
--     claims nothing for a released id (the messages it read are visible again at once, and
--     announced). So a release waits for a claim in progress and then gives back what it
--     started, and a claim that begins after its release claims nothing. Only the worker's
--     claims and releases lock its fence (no foreign key refers to it; deleting the worker
--     deletes it: prune_data_older_than deletes fences first), so neither heartbeats nor the
--     foreign-key checks on worker rows wait for claims or releases. A worker that registered
--     while this migrated gets its fence from its first release.
--   * release_claim refuses to run outside READ COMMITTED (25000): a snapshot taken before its
--     wait would not see the claim's tasks.
--   * sql/contrib/prune_data_older_than.sql deletes the fences of the workers it deletes
--     before their rows, in a claim's order (run that file again: deleting the row first, the
--     fence by its cascade, deadlocked with a claim of that worker).
--   * Workers use a new claim id for every try of a claim, and bound the release's wait with
--     lock_timeout (a claim still running is given back later).
--
-- Data: a new table with one row per existing worker; no task, run, queue or message changes.
-- Locks: ACCESS EXCLUSIVE on the new table; SHARE ROW EXCLUSIVE on pgflow.workers for the
-- foreign key, which waits for every open transaction that wrote workers (registrations,
-- heartbeats) and holds them up until commit. It waits at most 10 s (lock_timeout), after which
-- it fails with nothing changed: run it again. Applied by the pgflow migration runner in one
-- transaction. Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
-- [end migration-only]

create table pgflow.claim_fences (
  worker_id          uuid not null,
  released_claim_ids uuid[] not null default '{}',
  constraint claim_fences_pkey primary key (worker_id),
  constraint claim_fences_worker_id_fkey foreign key (worker_id)
    references pgflow.workers (worker_id) on delete cascade
);

-- [migration-only: the fences of the workers registered before 0030]
insert into pgflow.claim_fences (worker_id) select w.worker_id from pgflow.workers w;
-- [end migration-only]

set local check_function_bodies = off;

-- ---- sql/schema/functions/claims/claim_tasks.sql
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

-- ---- sql/schema/functions/claims/release_claim.sql
-- Gives back the tasks one claim_tasks call started for `worker_id` under `claim_id`, when the
-- worker never received that call's reply (its connection broke after the claim committed):
-- each task still started under that claim is queued again as if the claim had not happened
-- (the attempt it counted is taken back) and its message is visible at once (with the queue's
-- announcement), so the work goes on now rather than after stall recovery (step timeout +
-- 30 s). Tasks that have moved on since (completed, cancelled, claimed again) are left alone,
-- and calling it again, or for a claim that never committed, returns 0. Returns how many tasks
-- were given back.
-- The lost claim may not have ended yet, or not even begun: its query can still be on its way
-- to a server backend, or running there. So the claim id is first recorded as released in the
-- worker's claim fence (pgflow.claim_fences, since 0030) under that row's lock: a claim still
-- running holds it FOR KEY SHARE, so this waits for it to commit or roll back and then gives
-- back what it started; a claim that begins later finds its id released and claims nothing.
-- Before 0030 a claim that committed after its release kept its tasks until stall recovery. A
-- worker therefore uses a new claim id for every try of a claim, and bounds this wait with
-- lock_timeout (a claim can run long: 55P03, try again later). Needs READ COMMITTED (a snapshot
-- taken before the wait would not see the claim's tasks: 25000).
-- Locks: the worker's claim fence FOR UPDATE -> runs FOR UPDATE in run_id order (_lock_runs)
-- -> tasks -> messages, never waited for.
create or replace function pgflow.release_claim(worker_id uuid, claim_id uuid) returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_runs uuid[];
  v_task record;
  v_count int := 0;
begin
  if release_claim.worker_id is null or release_claim.claim_id is null then
    raise exception 'release_claim(): worker_id and claim_id must not be NULL'
      using errcode = 'null_value_not_allowed';
  end if;
  if current_setting('transaction_isolation') <> 'read committed' then
    raise exception 'release_claim() needs READ COMMITTED, not %: a snapshot taken before it waits for the claim would not see the claim''s tasks',
      upper(current_setting('transaction_isolation')) using errcode = 'invalid_transaction_state';
  end if;
  -- The claim's end, then its id released, before its tasks are looked for. (A worker that
  -- registered while 0030 was migrating has no fence: it gets one here.)
  insert into pgflow.claim_fences (worker_id)
  select w.worker_id from pgflow.workers w where w.worker_id = release_claim.worker_id
  on conflict do nothing;
  perform 1 from pgflow.claim_fences f where f.worker_id = release_claim.worker_id for update;
  if not found then
    return 0;  -- an unregistered worker: claim_tasks refuses its claims
  end if;
  update pgflow.claim_fences f
  set released_claim_ids =  -- the last 100
    (array_remove(f.released_claim_ids, release_claim.claim_id) || release_claim.claim_id)
    [greatest(cardinality(array_remove(f.released_claim_ids, release_claim.claim_id)) - 98, 1):]
  where f.worker_id = release_claim.worker_id;
  select array_agg(distinct t.run_id order by t.run_id) into v_runs
  from pgflow.step_tasks t
  where t.last_worker_id = release_claim.worker_id and t.status = 'started'
    and t.last_claim_id = release_claim.claim_id;
  if v_runs is null then
    return 0;
  end if;
  perform pgflow._lock_runs(v_runs);
  for v_task in
    update pgflow.step_tasks t
    set status = 'queued', started_at = null, attempts_count = t.attempts_count - 1,
        last_claim_id = null
    where t.run_id = any(v_runs) and t.last_worker_id = release_claim.worker_id
      and t.status = 'started' and t.last_claim_id = release_claim.claim_id
    returning t.run_id, t.step_slug, t.task_index
  loop
    perform pgflow._set_task_message_vt(v_task.run_id, v_task.step_slug, v_task.task_index, 0);
    v_count := v_count + 1;
  end loop;
  return v_count;
end;
$$;

-- SECURITY DEFINER: the worker role writes tasks only through the worker API
-- (docs/security.md); nobody calls it unless granted (sql/contrib/grants.sql grants it to
-- pgflow_worker).
revoke execute on function pgflow.release_claim(uuid, uuid) from public;

-- ---- sql/schema/functions/workers/register_worker.sql
-- Registers a worker of this database's protocol for one flow on one queue, after
-- compilation: the flow's queue in queue mode `flow`, one step's private queue in mode `step`
-- (the worker row records that queue; its claims name the step). Refuses a worker function
-- paused by a fatal claim (see resume_worker_function) and a queue that is not on the flow's
-- route, and a function name outside 1..256 bytes (22023).
-- Locks: the worker_functions row (upsert); the wait is bounded (_bound_lock_waits) and a
-- timeout names the holder.
-- Called by: EdgeWorker startup.
create or replace function pgflow.register_worker(worker_id uuid, function_name text, flow_slug text,
                                       queue_name text, worker_protocol int)
returns pgflow.workers
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_flow pgflow.flows;
  v_route text[];
  v_function pgflow.worker_functions;
  v_worker pgflow.workers;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  -- (Bounded: a name is a primary key, and a btree entry must fit in a third of a page.)
  if coalesce(octet_length(register_worker.function_name), 0) not between 1 and 256 then
    raise exception 'Worker function name must be 1 to 256 bytes long, not %',
      coalesce(octet_length(register_worker.function_name), 0)
      using errcode = 'invalid_parameter_value';
  end if;
  select * into v_flow from pgflow.flows f where f.flow_slug = register_worker.flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist; compile it first (ensure_flow_compiled)',
      register_worker.flow_slug using errcode = 'no_data_found';
  end if;
  v_route := case when v_flow.queue_mode = 'flow' then array[lower(v_flow.flow_slug)]
                  else array(select s.queue_name from pgflow.steps s
                             where s.flow_slug = v_flow.flow_slug order by s.step_index) end;
  if register_worker.queue_name is null or not register_worker.queue_name = any(v_route) then
    raise exception 'Queue "%" is not on the route of flow "%" (%)',
      register_worker.queue_name, register_worker.flow_slug,
      case when v_flow.queue_mode = 'flow' then format('its queue is "%s"', v_route[1])
           else 'its step queues are ' || array_to_string(v_route, ', ') end
      using errcode = 'invalid_parameter_value';
  end if;

  insert into pgflow.worker_functions (function_name, updated_at)
  values (register_worker.function_name, clock_timestamp())
  on conflict (function_name) do update set updated_at = clock_timestamp()
  returning * into v_function;
  if v_function.paused_at is not null then
    -- (The command is quoted for pasting: a function name may hold a quote.)
    raise exception 'Worker function "%" is paused since % (%); fix the cause, then run: select pgflow.resume_worker_function(%);',
      v_function.function_name, v_function.paused_at, v_function.pause_reason,
      quote_literal(v_function.function_name)
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
  values (register_worker.worker_id, register_worker.queue_name, register_worker.function_name,
          register_worker.worker_protocol)
  returning * into v_worker;
  insert into pgflow.claim_fences (worker_id) values (register_worker.worker_id);  -- since 0030
  perform set_config('lock_timeout', v_restore, true);
  return v_worker;
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('the row of worker function "%s"', register_worker.function_name),
                                     null, 'pgflow.worker_functions', v_since, v_error);
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.register_worker(uuid, text, text, text, int) from public;
