-- pgflow SQL core, 0027: fixes from a review of the SQL core.
--
-- * Realtime (security): _emit_events calls realtime.send only when every function named
--   realtime.send is owned by a role that has the current user's (pgflow's owner's) privileges
--   (pg_has_role(owner, current_user, 'USAGE'): a superuser such as Supabase's supabase_admin,
--   or the owner). Before, any role with CREATE on the database could create schema realtime
--   and a send() that ran as pgflow's owner inside its SECURITY DEFINER functions.
-- * fail_tasks fences stale reports: a result may carry "claim_id" (a UUID string, or null);
--   when the task's last_claim_id differs, the failure changes nothing and the task's row is
--   returned as it is. Anything else as claim_id is 22023 naming the result. Without it, as
--   before. Same result type.
-- * Concurrency limits: _activate_keys activates only key values that have a held queued task
--   (one idx_step_tasks_held_keys probe each): the transaction record is a setting any role
--   may write for its own transaction. _admit_waiting_tasks (stall recovery's sweep) also
--   admits the flows its transaction recorded and clears the record, so stall recovery's
--   commit admits nothing and never waits for a gate row (it could deadlock, 40P01).
-- * Waits: _wait_deadline counts from clock_timestamp(), not the transaction start, and reads a
--   sleep's `until` without an offset as UTC (set timezone = 'UTC'); _settle_waits compares
--   deadlines with the wall clock at its start.
-- * Older transactions: timestamps written with now() are at least the ones the CHECK
--   constraints order them after (greatest(now(), ...)): _resolve_waiting_task, complete_task,
--   complete_tasks, _fail_task, _fail_type_violation, _fail_run, cancel_run, maybe_complete_run,
--   start_ready_steps, cascade_resolve_conditions, cascade_complete_taskless_steps,
--   _cascade_force_skip_steps. Before, a transaction that began before a run or wait step was
--   written by another session failed with 23514 (send_signal, cancel_run).
-- * calculate_retry_delay is capped at 2147483647 s (it overflowed, 22003, from base 5 at
--   attempt 29).
-- * _classify_claim_batch archives a message whose body names a task of its queue that has
--   another message now (a superseded copy, reason "stale: ..."), instead of calling it fatal
--   and pausing the worker function.
-- (sql/contrib/prune_data_older_than.sql, installed by hand, keeps workers that beat within the
-- last 30 s: run it again. Not part of this migration.)
--
-- Data: none. Locks: none beyond replacing functions (no table, index or trigger changes).
-- Applied by the pgflow migration runner in one transaction. Immutable once released.

set local check_function_bodies = off;

-- ---- sql/schema/functions/limits/_activate_keys.sql
-- Fair shares (since 0019): makes key values with waiting tasks active in a flow's stride order
-- (concurrency_keys), each at the lowest active pass of its scope when it joins or comes back,
-- with this admission's turn as its last (so it is served soon, but never ahead of a value that
-- has waited since an earlier turn: a stream of new values cannot starve one that waits): `p_keys`
-- ([[step, key], ...]) are the values of tasks a committing transaction queued held; with
-- `p_repair` (stall recovery's sweep) every value with waiting tasks is found (one index probe
-- per value) — what a commit outside READ COMMITTED, which admits nothing, left — and then idle
-- rows are deleted.
-- Only values that have a held queued task are activated (since 0027), one probe of
-- idx_step_tasks_held_keys each: `p_keys` comes from the transaction's record (the setting
-- pgflow.gated_keys, _note_gated_task), which any role may set for its own transaction, and
-- before 0027 a planted list made this SECURITY DEFINER admission write key value rows that
-- role may not write, and walk them all while holding the gate row. A legitimate value always
-- passes: the transaction queued a held task of it and admits before its commit ends.
-- Locks: the caller holds the flow's gate row; key value rows.
-- Called by: _admit_tasks.
create or replace function pgflow._activate_keys(p_gate pgflow.concurrency_gates, p_keys jsonb,
                                                 p_repair boolean)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_step record;
  v_found jsonb := coalesce(p_keys, '[]');
begin
  if p_repair then
    for v_step in
      select s.step_slug
      from pgflow.steps s
      left join pgflow.step_concurrency_limits l on l.flow_slug = s.flow_slug and l.step_slug = s.step_slug
      where s.flow_slug = p_gate.flow_slug and s.concurrency_limited
        and coalesce(l.key_path, p_gate.key_path) is not null
    loop
      v_found := v_found || coalesce((
        with recursive keys(key) as (
          (select t.concurrency_key from pgflow.step_tasks t
           where t.flow_slug = p_gate.flow_slug and t.step_slug = v_step.step_slug and t.gate = 'held'
             and t.status = 'queued' and t.concurrency_key is not null
           order by t.concurrency_key limit 1)
          union all
          select (select t.concurrency_key from pgflow.step_tasks t
                  where t.flow_slug = p_gate.flow_slug and t.step_slug = v_step.step_slug and t.gate = 'held'
                    and t.status = 'queued' and t.concurrency_key > k.key
                  order by t.concurrency_key limit 1)
          from keys k where k.key is not null)
        select jsonb_agg(jsonb_build_array(v_step.step_slug, k.key)) from keys k where k.key is not null), '[]');
    end loop;
  end if;

  insert into pgflow.concurrency_keys as k (flow_slug, scope, key, pass, last_turn)
  select p_gate.flow_slug, x.scope, x.key,
         coalesce((select min(a.pass) from pgflow.concurrency_keys a
                   where a.flow_slug = p_gate.flow_slug and a.scope = x.scope and a.pass is not null), 0),
         p_gate.turn
  from (select distinct case when l.key_path is not null then e->>0 else '' end as scope, e->>1 as key
        from jsonb_array_elements(v_found) e
        left join pgflow.step_concurrency_limits l on l.flow_slug = p_gate.flow_slug and l.step_slug = e->>0
        where exists (select 1 from pgflow.step_tasks t
                      where t.flow_slug = p_gate.flow_slug and t.step_slug = e->>0
                        and t.concurrency_key = e->>1 and t.gate = 'held' and t.status = 'queued')) x
  order by x.scope, x.key
  on conflict (flow_slug, scope, key) do update set pass = excluded.pass, last_turn = excluded.last_turn
    where k.pass is null;

  if p_repair then
    delete from pgflow.concurrency_keys k where k.flow_slug = p_gate.flow_slug and k.pass is null;
  end if;
end;
$$;

-- ---- sql/schema/functions/limits/_admit_waiting_tasks.sql
-- The sweep of concurrency limits: admits the held tasks of every limited flow that has room.
-- A commit normally admits them (_admit_gated_tasks); this catches what no commit did:
-- a task an admission skipped because another transaction held it locked and then rolled
-- back, and the tasks a REPEATABLE READ or SERIALIZABLE transaction queued or freed (it does
-- not admit). With concurrency keys (since 0019) it also activates every key value with waiting
-- tasks and deletes idle ones (_activate_keys). A gate another transaction holds is skipped:
-- that one is admitting. Does nothing outside READ COMMITTED.
-- It also consumes this transaction's own record (since 0027): the flows and key values that
-- the caller's earlier changes recorded for the commit (_note_gated_task: stall recovery's
-- _fail_task ending an admitted task records its flow) are admitted here, with the others, and
-- the record is cleared, so the commit admits nothing and never waits for a gate row. Before,
-- the commit then waited for such a flow's gate while this sweep still held gate rows it had
-- taken after it in byte order, and deadlocked (40P01) with a transaction committing tasks of
-- both flows. A recorded flow whose gate another transaction holds is skipped like any other:
-- the slot this transaction frees is admitted by that flow's next admission (any commit that
-- queues a held task of it or frees one of its slots) or by the next sweep.
-- Locks: gate rows (never waited for) -> key value rows -> held task rows (never waited for);
-- the messages it sends are new queue rows (since 0022).
-- Called by: requeue_stalled_tasks (each pass of stall recovery: live workers call it every
-- stall_recovery_interval).
create or replace function pgflow._admit_waiting_tasks()
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flow text;
  v_recorded text[];
  v_keys jsonb;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return;
  end if;
  -- This transaction's record, taken over from the commit (see above).
  v_recorded := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  v_keys := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
  perform set_config('pgflow.gated_flows', '', true);
  perform set_config('pgflow.gated_keys', '', true);
  for v_flow in
    select x.flow_slug from (
      select g.flow_slug from pgflow.concurrency_gates g
      where exists (select 1 from pgflow.step_tasks t
                    where t.flow_slug = g.flow_slug and t.gate = 'held' and t.status = 'queued')
         or g.has_keys and exists (select 1 from pgflow.concurrency_keys k
                                   where k.flow_slug = g.flow_slug and k.pass is null)
      union
      select r from unnest(v_recorded) r) x
    order by x.flow_slug collate "C"
  loop
    perform pgflow._admit_tasks(v_flow, false,
                                (select jsonb_agg(jsonb_build_array(e->>1, e->>2))
                                 from jsonb_array_elements(v_keys) e where e->>0 = v_flow));
  end loop;
end;
$$;

-- ---- sql/schema/functions/events/_emit_events.sql
-- Publishes state changes, one event per element of the arrays, in array order: a step's
-- current status as step:<slug>:<status> where `p_step_slugs` has a slug, a run's as
-- run:<status> where it is NULL (`p_error_message` goes with failed runs). The one place events
-- go out (since 0015; _emit before), so a batch of results publishes all its events in one call:
--   * pg_notify on channel pgflow_events, one notification per event with only event (the
--     event type), run_id, flow_slug, step_slug and status, far below NOTIFY's 8000-byte
--     limit and never carrying data; set-based. Setting pgflow.notify_events to off turns it
--     off (per database, role or session; docs/observability.md): a transaction that notifies
--     takes a cluster-wide lock from its commit until the commit's WAL flush is done, so
--     notifying producers and reporters commit one at a time.
--   * when realtime.send(jsonb, text, text, boolean) exists (Supabase) and is trusted,
--     upstream's broadcast, on topic pgflow:run:<run_id> with upstream's payload
--     (_run_event_details, _step_event_details), read from the step state's or run's row as it
--     is now. Trusted (since 0027): every function named realtime.send is owned by a role that
--     has the current user's privileges (pg_has_role(owner, current_user, 'USAGE'): the current
--     user itself, a member of it that inherits, or a superuser - Supabase's supabase_admin). The
--     callers are SECURITY DEFINER, so the current user is pgflow's owner: before 0027 any role
--     with CREATE on the database could create schema realtime and a send() whose code then ran
--     as pgflow's owner and saw every payload. The function's owner is what matters: a function
--     is owned by whoever created it, and only its owner may replace, rename, move or re-own it,
--     so the owner of schema realtime (or a role with CREATE on it) can drop a trusted send but
--     never put an untrusted one in its place unseen. Every overload is checked because one
--     with defaults or a variadic tail could make the call ambiguous. An untrusted send is
--     silently skipped, like a missing one (docs/security.md).
-- Events carry keys, not rows (since 0024): a row passed by value is copied at every function
-- call, array and query it goes through, and an output or input of 100 MB made that 11 of a
-- complete_task's 22 seconds. Every caller publishes a row it has just written, so the row read
-- back is the one it would have passed; only the status can differ (a started wait step's
-- event says 'waiting').
-- Called by: _emit_run_event, _emit_step_event, _emit_step_events, complete_tasks.
create or replace function pgflow._emit_events(p_run_ids uuid[], p_flow_slugs text[],
                                               p_step_slugs text[], p_statuses text[],
                                               p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', jsonb_strip_nulls(jsonb_build_object(
              'event', case when e.step_slug is null then 'run:' else 'step:' end || e.status,
              'run_id', e.run_id, 'flow_slug', e.flow_slug, 'step_slug', e.step_slug,
              'status', e.status))::text)
    from unnest(p_run_ids, p_flow_slugs, p_step_slugs, p_statuses) with ordinality
         e(run_id, flow_slug, step_slug, status, n)
    order by e.n;
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering. Only a trusted send is called (see above).
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector)
     and not exists (select 1 from pg_catalog.pg_proc p
                     join pg_catalog.pg_namespace n on n.oid = p.pronamespace
                     where n.nspname = 'realtime' and p.proname = 'send'
                       and not pg_catalog.pg_has_role(p.proowner, current_user, 'USAGE')) then
    perform realtime.send(
              case when e.step_slug is null
                   then jsonb_build_object('event_type', 'run:' || e.status, 'run_id', e.run_id,
                                           'flow_slug', e.flow_slug, 'status', e.status)
                        || pgflow._run_event_details(r, p_error_message)
                   else jsonb_build_object('event_type', 'step:' || e.status, 'run_id', e.run_id,
                                           'step_slug', e.step_slug, 'status', e.status)
                        || pgflow._step_event_details(ss, e.status) end,
              case when e.step_slug is null then 'run:' || e.status
                   else 'step:' || e.step_slug || ':' || e.status end,
              'pgflow:run:' || e.run_id, false)
    from unnest(p_run_ids, p_flow_slugs, p_step_slugs, p_statuses) with ordinality
         e(run_id, flow_slug, step_slug, status, n)
    left join pgflow.step_states ss on ss.run_id = e.run_id and ss.step_slug = e.step_slug
    left join pgflow.runs r on e.step_slug is null and r.run_id = e.run_id
    order by e.n;
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/cancel_run.sql
-- Cancels a started run in one transaction: the run becomes failed with cancelled_at and
-- `reason` (run:failed, error message "cancelled" or "cancelled: <reason>"); every step that
-- had not ended (created or started) becomes failed with the same error message (step:failed
-- for each, since schema 0014: before, a running step stayed `started` under a cancelled run);
-- every queued, started or waiting task becomes cancelled and its message is archived, and workers
-- running its tasks are told to stop them (_terminate_tasks). Completed and skipped steps keep
-- their outcome. Returns true when this call cancelled the run, false when the run had
-- already finished (nothing changes; a NOTICE says how it ended). An unknown run is an error
-- (P0002). Later results of its tasks change nothing (complete_task / fail_task ignore runs
-- that are not started) unless the run is resumed (resume_run: the failed steps start again,
-- or wait for their dependencies, as after any failure). SECURITY DEFINER: only granted roles
-- may call it.
-- Locks: run FOR UPDATE -> step states (step_slug order) -> tasks -> messages (via _fail_run).
-- Called by: Client::cancel_run, `pgflow run cancel`; SQL users.
create or replace function pgflow.cancel_run(run_id uuid, reason text default null) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_message text := 'cancelled' || coalesce(': ' || cancel_run.reason, '');
begin
  v_run := pgflow._lock_run_for_control(cancel_run.run_id);
  if v_run.status <> 'started' then
    raise notice 'run % already finished (%): nothing to cancel', v_run.run_id,
      case when v_run.cancelled_at is not null then 'cancelled' else v_run.status end;
    return false;
  end if;
  perform 1 from pgflow.step_states ss where ss.run_id = v_run.run_id order by ss.step_slug for update;
  perform pgflow._fail_run(v_run.run_id, v_message);
  update pgflow.runs r set cancelled_at = r.failed_at, cancel_reason = cancel_run.reason
  where r.run_id = v_run.run_id;
  for v_state in
    with ended as (
      update pgflow.step_states ss
      set status = 'failed', failed_at = greatest(now(), ss.started_at), error_message = v_message
      where ss.run_id = v_run.run_id and ss.status in ('created', 'started')
      returning ss.*)
    select * from ended order by step_slug
  loop
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
  end loop;
  return true;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.cancel_run(uuid, text) from public;

-- ---- sql/schema/functions/runtime/start_ready_steps.sql
-- Starts every ready step with a known, positive task count (in step_slug order), and gives each
-- its tasks and messages (_enqueue_step_tasks). Once all are started, the waits among them
-- (since 0021) take the signals buffered for them and complete if already due (_settle_waits).
-- Locks: the caller holds the run; step states FOR UPDATE -> task rows -> queue rows.
-- Called by: _advance_run.
create or replace function pgflow.start_ready_steps(run_id uuid) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step record;
  v_waits boolean := false;
begin
  select * into v_run from pgflow.runs r where r.run_id = start_ready_steps.run_id;
  if not found or v_run.status <> 'started' then
    return;
  end if;

  for v_step in
    with ready as (
      select ss.step_slug
      from pgflow.step_states ss
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and ss.initial_tasks > 0
      order by ss.step_slug
      for update),
    started as (
      update pgflow.step_states ss
      set status = 'started', started_at = greatest(now(), ss.created_at), remaining_tasks = ss.initial_tasks
      from ready
      where ss.run_id = v_run.run_id and ss.step_slug = ready.step_slug
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name,
           s.concurrency_limited, s.wait
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay,
                                       v_step.concurrency_limited, v_step.wait);
    v_waits := v_waits or v_step.wait is not null;
  end loop;
  if v_waits then
    perform pgflow._settle_waits(v_run.run_id);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/cascade_resolve_conditions.sql
-- Evaluates the conditions of every step that just became ready, until nothing changes:
-- `fail` fails the step and the run, `skip` skips the step (its dependents run without it),
-- `skip-cascade` skips it and everything downstream. Returns false when a `fail` condition
-- failed the run, true otherwise.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_resolve_conditions(run_id uuid) returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_failing text[];
  v_skipped text[];
  v_cascading text[];
  v_cascaded int;
  v_state pgflow.step_states;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_resolve_conditions.run_id;
    if not found or v_run.status <> 'started' then
      return coalesce(v_run.status <> 'failed', true);
    end if;

    -- Unmet conditions among ready steps, by mode, in step order.
    select array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'fail'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip-cascade')
    into v_failing, v_skipped, v_cascading
    from (
      select ss.step_slug, s.when_unmet, s.step_index
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      cross join lateral (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                         s.deps_count) as value) ci
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and (s.required_input_pattern is not null or s.forbidden_input_pattern is not null)
        and not ((s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                 and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern))
    ) x;

    -- 1. `fail`: the first such step fails, and the run with it.
    if v_failing is not null then
      update pgflow.step_states ss
      set status = 'failed', failed_at = greatest(now(), ss.started_at), error_message = 'Condition not met'
      where ss.run_id = v_run.run_id and ss.step_slug = v_failing[1]
      returning * into v_state;
      perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
      perform pgflow._fail_run(v_run.run_id, 'Condition not met');
      return false;
    end if;

    -- 2. `skip`: the steps are skipped; their dependents run without them.
    if v_skipped is not null then
      update pgflow.step_states ss
      set status = 'skipped', skip_reason = 'condition_unmet', skipped_at = greatest(now(), ss.created_at)
      where ss.run_id = v_run.run_id and ss.step_slug = any(v_skipped);
      perform pgflow._emit_step_events(v_run.run_id, v_skipped);
      -- A map whose only dependency was skipped has nothing to map over: zero tasks.
      perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_skipped, 0, true);
      update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_skipped)
      where r.run_id = v_run.run_id;
    end if;

    -- 3. `skip-cascade`: the steps and everything downstream are skipped.
    v_cascaded := 0;
    for i in 1 .. coalesce(cardinality(v_cascading), 0) loop
      v_cascaded := v_cascaded + pgflow._cascade_force_skip_steps(v_run.run_id, v_cascading[i],
                                                                   'condition_unmet');
    end loop;

    exit when v_skipped is null and v_cascaded = 0;
  end loop;
  return true;
end;
$$;

-- ---- sql/schema/functions/runtime/cascade_complete_taskless_steps.sql
-- Completes ready steps that have no tasks (maps over empty arrays), wave after wave, and
-- releases their dependents. Returns how many steps it completed. Each wave completes at
-- least one step, so the loop ends after at most as many waves as the flow has steps.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_complete_taskless_steps(run_id uuid) returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_slugs text[];
  v_total int := 0;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_complete_taskless_steps.run_id;
    exit when not found or v_run.status <> 'started';

    select array_agg(ss.step_slug order by s.step_index) into v_slugs
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
      and ss.initial_tasks = 0
      -- A step whose condition is unmet is left to cascade_resolve_conditions, which
      -- _advance_run runs again after every call that completed something.
      and ((s.required_input_pattern is null and s.forbidden_input_pattern is null)
           or (select (s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                      and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern)
               from (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                    s.deps_count) as value) ci));
    exit when v_slugs is null;

    update pgflow.step_states ss
    set status = 'completed', started_at = greatest(now(), ss.created_at), completed_at = greatest(now(), ss.created_at), remaining_tasks = 0,
        output = case when s.step_type = 'map' then '[]'::jsonb end
    from pgflow.steps s
    where ss.run_id = v_run.run_id and ss.step_slug = any(v_slugs)
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug;

    perform pgflow._emit_step_events(v_run.run_id, v_slugs);

    -- An empty map's dependent map maps over that empty array: zero tasks as well.
    perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_slugs, 0, true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
    where r.run_id = v_run.run_id;
    v_total := v_total + cardinality(v_slugs);
  end loop;
  return v_total;
end;
$$;

-- ---- sql/schema/functions/runtime/_cascade_force_skip_steps.sql
-- Skips the step and all its transitive dependents that are still created or started, ends
-- their tasks as `skipped` and archives their messages (in every task queue). Returns how
-- many steps it skipped (0 when called again).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (skip-cascade), _fail_task (when_exhausted skip-cascade).
create or replace function pgflow._cascade_force_skip_steps(run_id uuid, step_slug text, skip_reason text)
returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_slugs text[];
begin
  select r.flow_slug into v_flow from pgflow.runs r where r.run_id = _cascade_force_skip_steps.run_id;
  if not found then
    raise exception 'Run not found: %', _cascade_force_skip_steps.run_id using errcode = 'no_data_found';
  end if;

  with recursive affected(slug) as (
    select _cascade_force_skip_steps.step_slug
    union
    select d.step_slug from pgflow.deps d join affected a on d.dep_slug = a.slug
    where d.flow_slug = v_flow)
  select array_agg(ss.step_slug order by s.step_index) into v_slugs
  from pgflow.step_states ss
  join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
  where ss.run_id = _cascade_force_skip_steps.run_id
    and ss.step_slug in (select a.slug from affected a)
    and ss.status in ('created', 'started');
  if v_slugs is null then
    return 0;
  end if;

  update pgflow.step_states ss
  set status = 'skipped', skipped_at = greatest(now(), ss.created_at), remaining_tasks = null,
      skip_reason = case when ss.step_slug = _cascade_force_skip_steps.step_slug
                         then _cascade_force_skip_steps.skip_reason else 'dependency_skipped' end
  where ss.run_id = _cascade_force_skip_steps.run_id and ss.step_slug = any(v_slugs);

  perform pgflow._emit_step_events(_cascade_force_skip_steps.run_id, v_slugs);

  perform pgflow._terminate_tasks(_cascade_force_skip_steps.run_id, v_slugs, 'skipped');
  update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
  where r.run_id = _cascade_force_skip_steps.run_id;
  return cardinality(v_slugs);
end;
$$;

-- ---- sql/schema/functions/runtime/maybe_complete_run.sql
-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf steps
-- (NULL when none completed; _run_output). Only a started run can complete.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = greatest(now(), r.started_at),
      output = pgflow._run_output(r.run_id)
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/_fail_run.sql
-- Fails a started run: status, run:failed event, and every unfinished task cancelled (their
-- messages archived).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (a `fail` condition), _fail_type_violation (a type
-- violation), _fail_task (when_exhausted fail), cancel_run.
create or replace function pgflow._fail_run(p_run_id uuid, p_error_message text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r set status = 'failed', failed_at = greatest(now(), r.started_at)
  where r.run_id = p_run_id and r.status = 'started'
  returning * into v_run;
  if not found then
    return;
  end if;
  perform pgflow._emit_run_event(v_run.run_id, v_run.flow_slug, v_run.status, p_error_message);
  perform pgflow._terminate_tasks(p_run_id, null, 'cancelled');
end;
$$;

-- ---- sql/schema/functions/runtime/complete_task.sql
-- Reports a task's result. Only a started task of a started step of a started run completes;
-- anything else changes nothing (a late callback's message is archived). The last task of a
-- step completes the step (a map's output is every task output in task_index order), releases
-- its dependents and advances the run. A single step feeding a map whose size is still
-- unknown must produce an array, or the run fails with [TYPE_VIOLATION].
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: complete_tasks, _resolve_waiting_task; workers of protocols 4 and 5 and upstream's;
-- SQL users. Calls _fail_type_violation (off the hot path).
create or replace function pgflow.complete_task(run_id uuid, step_slug text, task_index int, output jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_child text;
  v_output jsonb;
begin
  -- Lock order: run, step state, task; their messages last.
  select * into v_run from pgflow.runs r where r.run_id = complete_task.run_id for update;
  if not found then
    return;
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = complete_task.run_id and ss.step_slug = complete_task.step_slug for update;
  select * into v_task from pgflow.step_tasks t
  where t.run_id = complete_task.run_id and t.step_slug = complete_task.step_slug
    and t.task_index = complete_task.task_index
  for update;
  if not found then
    return;
  end if;

  -- Late callbacks: the run or the step already ended (the task was cancelled or skipped,
  -- which are terminal), so nothing changes; the message can go.
  if v_run.status <> 'started' or v_state.status <> 'started' then
    perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
    return next v_task;
    return;
  end if;
  -- Only a started task completes; queued, completed or failed tasks stay as they are.
  if v_task.status <> 'started' then
    return next v_task;
    return;
  end if;

  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = complete_task.step_slug;

  -- A single step feeding a map whose size is still unknown must produce an array (checked
  -- only for outputs that are not arrays: an array is always fine).
  if v_step.step_type = 'single'
     and (complete_task.output is null or jsonb_typeof(complete_task.output) <> 'array') then
    select c.step_slug into v_child
    from pgflow.deps d
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    join pgflow.step_states c on c.run_id = v_run.run_id and c.step_slug = d.step_slug
    where d.flow_slug = v_run.flow_slug and d.dep_slug = complete_task.step_slug
      and cs.step_type = 'map' and c.status = 'created' and c.initial_tasks is null
    order by cs.step_index
    limit 1;
    if v_child is not null then
      return next pgflow._fail_type_violation(v_run, v_task, v_child, complete_task.output);
      return;
    end if;
  end if;

  update pgflow.step_tasks t
  set status = 'completed', completed_at = greatest(now(), t.started_at, t.queued_at), output = complete_task.output
  where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
    and t.task_index = v_task.task_index
  returning * into v_task;

  if v_state.remaining_tasks > 1 then
    update pgflow.step_states ss set remaining_tasks = ss.remaining_tasks - 1
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug;
  else
    -- The last task (the step state is locked, so no sibling can finish in between): the
    -- step is done. A map's output is every task output in task_index order.
    v_output := case when v_step.step_type = 'map'
      then (select coalesce(jsonb_agg(t.output order by t.task_index), '[]'::jsonb)
            from pgflow.step_tasks t
            where t.run_id = v_run.run_id and t.step_slug = complete_task.step_slug
              and t.status = 'completed')
      else complete_task.output end;
    update pgflow.step_states ss
    set remaining_tasks = 0, status = 'completed', completed_at = greatest(now(), ss.started_at), output = v_output
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug
    returning * into v_state;
    perform pgflow._release_children(
      v_run.run_id, v_run.flow_slug, array[complete_task.step_slug],
      case when jsonb_typeof(v_output) = 'array' then jsonb_array_length(v_output) end,
      true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = v_run.run_id;
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
    perform pgflow._advance_run(v_run.run_id);
  end if;

  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return next v_task;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.complete_task(uuid, text, int, jsonb) from public;

-- ---- sql/schema/functions/runtime/_fail_type_violation.sql
-- Upstream's [TYPE_VIOLATION]: a single step produced something other than an array for a
-- dependent map whose task count is still unknown. The task fails with the bad output stored,
-- the run fails (run:failed without an error message, its other tasks cancelled), then the
-- step fails (step:failed), and the task's message is archived. when_exhausted does not apply:
-- a type violation is never retried or skipped. Returns the task row.
-- Locks: the caller holds the run, the step state and the task (complete_task).
-- Called by: complete_task.
create or replace function pgflow._fail_type_violation(p_run pgflow.runs, p_task pgflow.step_tasks,
                                                       p_map_step text, p_output jsonb)
returns pgflow.step_tasks
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_type text := coalesce(jsonb_typeof(p_output), 'null');
  v_task pgflow.step_tasks;
  v_state pgflow.step_states;
begin
  update pgflow.step_tasks t
  set status = 'failed', failed_at = greatest(now(), t.started_at, t.queued_at), output = p_output,
      error_message = '[TYPE_VIOLATION] Produced ' || v_type || ' instead of array'
  where t.run_id = p_task.run_id and t.step_slug = p_task.step_slug
    and t.task_index = p_task.task_index
  returning * into v_task;
  perform pgflow._fail_run(p_run.run_id, null);
  update pgflow.step_states ss
  set status = 'failed', failed_at = greatest(now(), ss.started_at),
      error_message = '[TYPE_VIOLATION] Map step ' || p_map_step
        || ' expects array input but dependency ' || p_task.step_slug || ' produced ' || v_type
  where ss.run_id = p_run.run_id and ss.step_slug = p_task.step_slug
  returning * into v_state;
  perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return v_task;
end;
$$;

-- ---- sql/schema/functions/runtime/complete_tasks.sql
-- Reports a batch of task results in one call (the worker's reporter). `results` is a JSON
-- array of {"run_id", "step_slug", "task_index", "output"}. Each result ends exactly as
-- complete_task would leave it if the results were applied one by one in (run_id, step_slug,
-- task_index) order; returns the row complete_task returns for each (in no particular order).
--
-- Set-based where that cannot change an outcome: a run all of whose results complete tasks
-- of one step (one-step runs, the tasks of one map: the usual batch) is handled together with
-- every other such run: one UPDATE of their tasks, one decrement per step state, and for the
-- steps whose last task this was, one statement each to complete them, release their children
-- and count down their runs; runs left without steps complete in one UPDATE, the others go
-- through _advance_run. Runs whose results complete nothing (late or stale results) need no
-- order either. Messages are archived with one pgmq.archive per queue, last. Any other run
-- (completing results for several steps or next to results that do not complete, the same
-- task twice, a single step's non-array output that may be a type violation) goes through
-- complete_task result by result: there one result can change what the next one does (a run
-- failed by a condition cancels the tasks after it).
-- Locks: runs FOR UPDATE in run_id order (_lock_runs) -> step states -> tasks -> messages last,
-- never waited for (_archive_messages skips one a reader holds; its claim archives it).
-- Called by: workers (the reporter, protocol 5); SQL users.
create or replace function pgflow.complete_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
set enable_hashjoin = off  -- its joins with the batch probe keys, never scan a table
set enable_mergejoin = off
as $$
#variable_conflict use_column
declare
  v_run_ids uuid[];
  v_steps text[];
  v_indexes int[];
  v_outputs jsonb[];
  v_kinds text[];
  v_finished_runs uuid[];  -- steps completed here, one per run at most (by run_id)
  v_finished_flows text[];
  v_finished_steps text[];
  v_finished_items int[];  -- each one's output's array length (NULL: not an array)
  v_advance uuid[];
  v_completed_runs uuid[];  -- runs completed here (by run_id)
  v_completed_flows text[];
  v_queues text[];
  v_message_ids bigint[];
begin
  -- One result: complete_task is the same thing, without the batch machinery (a sorted set
  -- and arrays of results, which copy the output at every statement that reads them). Any
  -- other batch, and anything that is not an array, is checked once, by _task_results.
  if jsonb_typeof(results) = 'array' and jsonb_array_length(results) = 1 then
    perform pgflow._check_task_results(results, 'complete_tasks', 'output');
    return query
    select * from pgflow.complete_task((results #>> '{0,run_id}')::uuid, results #>> '{0,step_slug}',
                                       (results #>> '{0,task_index}')::int, results #> '{0,output}');
    return;
  end if;
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value order by r.n)
  into v_run_ids, v_steps, v_indexes, v_outputs
  from pgflow._task_results(results, 'complete_tasks', 'output') with ordinality
       r(run_id, step_slug, task_index, value, pos, n);
  perform pgflow._lock_runs(v_run_ids);

  -- Classify every result (under the run locks, so nothing changes underneath):
  --   missing    no such task: nothing to do, nothing returned
  --   late       the run or the step ended: unchanged, message archived
  --   unchanged  the task is not started (queued, completed, failed, ...): unchanged
  --   complete   completes, set-based
  --   one_by_one through complete_task: its run has the same task twice, a possible type
  --              violation, or completing results for several steps or next to results
  --              that do not complete
  select array_agg(k.kind order by k.n)
  into v_kinds
  from (
    select case when bool_or(k.duplicate or k.maybe_violation) over w
                  or (bool_or(k.completes) over w
                      and (not bool_and(k.completes) over w
                           or min(k.step_slug) over w <> max(k.step_slug) over w)) then 'one_by_one'
                when k.task_status is null then 'missing'
                when k.run_status <> 'started' or k.state_status <> 'started' then 'late'
                when not k.completes then 'unchanged'
                else 'complete' end as kind,
           k.n
    from (
      select b.run_id, b.step_slug, b.n, r.status as run_status, ss.status as state_status,
             t.status as task_status,
             count(*) over (partition by b.run_id, b.step_slug, b.task_index) > 1 as duplicate,
             coalesce(r.status = 'started' and ss.status = 'started' and t.status = 'started',
                      false) as completes,
             coalesce(r.status = 'started' and ss.status = 'started' and t.status = 'started'
                      and s.step_type = 'single'
                      and (b.output is null or jsonb_typeof(b.output) <> 'array')
                      and exists (select 1
                                  from pgflow.deps d
                                  join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
                                  join pgflow.step_states c on c.run_id = b.run_id and c.step_slug = d.step_slug
                                  where d.flow_slug = r.flow_slug and d.dep_slug = b.step_slug
                                    and cs.step_type = 'map' and c.status = 'created'
                                    and c.initial_tasks is null),
                      false) as maybe_violation
      from unnest(v_run_ids, v_steps, v_indexes, v_outputs) with ordinality
           b(run_id, step_slug, task_index, output, n)
      left join lateral (select r.status, r.flow_slug from pgflow.runs r
                         where r.run_id = b.run_id) r on true
      left join lateral (select ss.status from pgflow.step_states ss
                         where ss.run_id = b.run_id and ss.step_slug = b.step_slug) ss on true
      left join lateral (select t.status from pgflow.step_tasks t
                         where t.run_id = b.run_id and t.step_slug = b.step_slug
                           and t.task_index = b.task_index) t on true
      left join lateral (select s.step_type from pgflow.steps s
                         where s.flow_slug = r.flow_slug and s.step_slug = b.step_slug) s on true
    ) k
    window w as (partition by k.run_id)
  ) k;

  -- Runs that need the one-by-one path.
  for i in 1 .. cardinality(v_run_ids) loop
    if v_kinds[i] = 'one_by_one' then
      return query select * from pgflow.complete_task(v_run_ids[i], v_steps[i], v_indexes[i], v_outputs[i]);
    end if;
  end loop;

  -- Set-based completion: step states locked before their tasks (the lock order), then the
  -- tasks, then the step states counted down; a step whose count reaches 0 completes (a map's
  -- output is every task output in task_index order, read after the tasks were updated).
  perform 1
  from pgflow.step_states ss
  join (select distinct b.run_id, b.step_slug
        from unnest(v_run_ids, v_steps, v_kinds) b(run_id, step_slug, kind)
        where b.kind = 'complete') b on ss.run_id = b.run_id and ss.step_slug = b.step_slug
  order by ss.run_id, ss.step_slug
  for update of ss;

  return query
  update pgflow.step_tasks t
  set status = 'completed', completed_at = greatest(now(), t.started_at, t.queued_at), output = b.output
  from unnest(v_run_ids, v_steps, v_indexes, v_outputs, v_kinds) b(run_id, step_slug, task_index, output, kind)
  where b.kind = 'complete' and t.run_id = b.run_id and t.step_slug = b.step_slug
    and t.task_index = b.task_index
  returning t.*;

  with counted as (
    update pgflow.step_states ss
    set remaining_tasks = ss.remaining_tasks - b.n,
        status = case when ss.remaining_tasks = b.n then 'completed' else ss.status end,
        completed_at = case when ss.remaining_tasks = b.n then greatest(now(), ss.started_at) else ss.completed_at end,
        output = case when ss.remaining_tasks <> b.n then ss.output
                      when s.step_type = 'map'
                        then (select coalesce(jsonb_agg(t.output order by t.task_index), '[]'::jsonb)
                              from pgflow.step_tasks t
                              where t.run_id = ss.run_id and t.step_slug = ss.step_slug
                                and t.status = 'completed')
                      else b.output end
    from (select b.run_id, b.step_slug, count(*)::int as n, (array_agg(b.output))[1] as output
          from unnest(v_run_ids, v_steps, v_outputs, v_kinds) b(run_id, step_slug, output, kind)
          where b.kind = 'complete'
          group by b.run_id, b.step_slug) b,
         pgflow.steps s
    where ss.run_id = b.run_id and ss.step_slug = b.step_slug
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    returning ss.run_id, ss.flow_slug, ss.step_slug, ss.status,
              case when jsonb_typeof(ss.output) = 'array' then jsonb_array_length(ss.output) end
                as items)
  -- (keys, not rows: a step state's output can be large, and an array of rows copies it at
  -- every statement that reads the array)
  select array_agg(c.run_id order by c.run_id), array_agg(c.flow_slug order by c.run_id),
         array_agg(c.step_slug order by c.run_id), array_agg(c.items order by c.run_id)
  into v_finished_runs, v_finished_flows, v_finished_steps, v_finished_items
  from counted c
  where c.status = 'completed';

  if v_finished_runs is not null then
    -- Children of the completed steps lose a pending dependency (as _release_children; at
    -- most one completed step per run here); a map child learns its task count.
    update pgflow.step_states c
    set remaining_deps = c.remaining_deps - 1,
        initial_tasks = case when cs.step_type = 'map' then f.items else c.initial_tasks end
    from unnest(v_finished_runs, v_finished_flows, v_finished_steps, v_finished_items)
         f(run_id, flow_slug, step_slug, items)
    join pgflow.deps d on d.flow_slug = f.flow_slug and d.dep_slug = f.step_slug
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    where c.run_id = f.run_id and c.step_slug = d.step_slug and c.status = 'created';

    with counted as (
      update pgflow.runs r set remaining_steps = r.remaining_steps - 1
      from unnest(v_finished_runs) f(run_id)
      where r.run_id = f.run_id
      returning r.run_id, r.remaining_steps)
    select array_agg(c.run_id order by c.run_id) filter (where c.remaining_steps > 0)
    into v_advance
    from counted c;

    -- Runs without steps left complete (maybe_complete_run for all of them at once), and the
    -- batch's events go out in one call (the steps', then the runs'); the others move on.
    with done as (
      update pgflow.runs r
      set status = 'completed', completed_at = greatest(now(), r.started_at), output = pgflow._run_output(r.run_id)
      from unnest(v_finished_runs) f(run_id)
      where r.run_id = f.run_id and r.status = 'started' and r.remaining_steps = 0
      returning r.run_id, r.flow_slug)
    select coalesce(array_agg(d.run_id order by d.run_id), '{}'),
           coalesce(array_agg(d.flow_slug order by d.run_id), '{}')
    into v_completed_runs, v_completed_flows
    from done d;
    perform pgflow._emit_events(
      v_finished_runs || v_completed_runs, v_finished_flows || v_completed_flows,
      v_finished_steps || array_fill(null::text, array[cardinality(v_completed_runs)]),
      array_fill('completed'::text, array[cardinality(v_finished_runs) + cardinality(v_completed_runs)]));
    if v_advance is not null then
      for i in 1 .. cardinality(v_advance) loop
        perform pgflow._advance_run(v_advance[i]);
      end loop;
    end if;
  end if;

  -- Late results and results that change nothing are returned as they are.
  return query
  select t.*
  from unnest(v_run_ids, v_steps, v_indexes, v_kinds) b(run_id, step_slug, task_index, kind)
  join pgflow.step_tasks t
    on t.run_id = b.run_id and t.step_slug = b.step_slug and t.task_index = b.task_index
  where b.kind in ('late', 'unchanged');

  -- Messages last: completed and late tasks' messages, one archive per queue.
  select array_agg(t.queue_name), array_agg(t.message_id)
  into v_queues, v_message_ids
  from unnest(v_run_ids, v_steps, v_indexes, v_kinds) b(run_id, step_slug, task_index, kind)
  join pgflow.step_tasks t
    on t.run_id = b.run_id and t.step_slug = b.step_slug and t.task_index = b.task_index
  where b.kind in ('complete', 'late');
  perform pgflow._archive_messages(v_queues, v_message_ids);
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.complete_tasks(jsonb) from public;

-- ---- sql/schema/functions/runtime/_fail_task.sql
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

-- ---- sql/schema/functions/runtime/fail_tasks.sql
-- Reports a batch of handler failures in one call (the worker's reporter): `results` is a
-- JSON array of {"run_id", "step_slug", "task_index", "error_message"}, each with an optional
-- "permanent": true (since schema 0014, worker protocol 6) for a failure no retry can fix (a
-- conversion failure, or a handler's pgflow::permanent status): that attempt is the task's
-- last, whatever attempts remain, and its error message gets " (permanent: not retried)".
-- Every run of the batch is locked first, in run_id order; then each failure is applied
-- exactly as fail_task applies it, in (run_id, step_slug, task_index) order. Failures are rare
-- next to completions, so this saves round trips, not per-task work. Returns the row
-- fail_task returns for each. A "permanent" that is neither a JSON boolean nor null (null:
-- false) is an error (22023) naming the result, and changes nothing.
-- Fencing (since 0027): a result may carry "claim_id", the claim_id of the claim_tasks call
-- that claimed the attempt that failed (a UUID string in the 8-4-4-4-12 hex form; JSON null is
-- the same as no claim_id; anything else is an error (22023) naming the result, and changes
-- nothing). When the task's step_tasks.last_claim_id is distinct from it, the report is from a
-- superseded attempt - resent or delivered late after stall recovery or release_claim queued
-- the task again and another claim took it - and changes nothing: the task's row is returned
-- as it is, as for a failure of a task that is not started. Without claim_id a failure applies
-- to whatever attempt is started, as before (upstream's fail_task has no fence).
-- Locks: runs FOR UPDATE in run_id order, then as _fail_task for each result (the fence reads
-- the task under its run's lock, which every change of a task holds or conflicts with).
-- Called by: workers (the reporter, protocol 5 and 6); SQL users.
create or replace function pgflow.fail_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
declare
  v_run_ids uuid[];
  v_steps text[];
  v_indexes int[];
  v_errors text[];
  v_permanent boolean[];
  v_claims uuid[];
  v_bad bigint;
  v_bad_claim bigint;
  v_task pgflow.step_tasks;
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value #>> '{}' order by r.n),
         array_agg(coalesce((results -> (r.pos - 1)::int -> 'permanent') = 'true'::jsonb, false) order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'permanent') not in ('boolean', 'null')),
         array_agg(case when c.valid then c.claim::uuid end order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'claim_id') not in ('string', 'null')
                               or not c.valid)
  into v_run_ids, v_steps, v_indexes, v_errors, v_permanent, v_bad, v_claims, v_bad_claim
  from pgflow._task_results(results, 'fail_tasks', 'error_message') with ordinality r(run_id, step_slug, task_index, value, pos, n)
  cross join lateral (select x.claim,
                             x.claim ~ '^[0-9A-Fa-f]{8}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{4}-[0-9A-Fa-f]{12}$'
                      from (select case when jsonb_typeof(results -> (r.pos - 1)::int -> 'claim_id') = 'string'
                                        then results -> (r.pos - 1)::int ->> 'claim_id' end) x(claim)) c(claim, valid);
  if v_bad is not null then
    raise exception 'fail_tasks(): result %: "permanent" must be true or false', v_bad
      using errcode = 'invalid_parameter_value';
  end if;
  if v_bad_claim is not null then
    raise exception 'fail_tasks(): result %: "claim_id" must be a UUID string (the claim_id of claim_tasks) or null',
      v_bad_claim using errcode = 'invalid_parameter_value';
  end if;

  perform pgflow._lock_runs(v_run_ids);
  for i in 1 .. cardinality(v_run_ids) loop
    if v_claims[i] is not null then
      -- The fence: a report of another claim's attempt changes nothing.
      select * into v_task from pgflow.step_tasks t
      where t.run_id = v_run_ids[i] and t.step_slug = v_steps[i] and t.task_index = v_indexes[i];
      if found and v_task.last_claim_id is distinct from v_claims[i] then
        return next v_task;
        continue;
      end if;
    end if;
    return query select * from pgflow._fail_task(
      v_run_ids[i], v_steps[i], v_indexes[i],
      case when v_permanent[i] then coalesce(v_errors[i], 'failed') || ' (permanent: not retried)' else v_errors[i] end,
      v_permanent[i]);
  end loop;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.fail_tasks(jsonb) from public;
-- ---- sql/schema/functions/runtime/calculate_retry_delay.sql
-- Upstream's retry backoff: floor(base_delay * 2^attempts_count) seconds, at most 2147483647
-- (the int range, about 68 years; since 0027). Before, the int cast overflowed (22003) from
-- base 5 at attempt 29 (and power() itself past attempt 1023), so every failure report of such
-- a task raised and the task could never fail or retry. Computed in numeric (exact), with the
-- exponent capped at 64: 2^64 times any int base is far past the cap already. STRICT: NULL
-- in, NULL out, as before the cap (least() would turn NULL into the cap).
-- PL/pgSQL since 0016: a SQL function with a SET clause is never inlined, so every failure
-- parsed and planned its body again (sql/schema/README.md, Plans).
-- Locks: none.
-- Called by: _fail_task.
create or replace function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language plpgsql immutable strict parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  return least(floor(base_delay * power(2::numeric, least(attempts_count, 64))), 2147483647)::int;
end;
$$;
-- ---- sql/schema/functions/waits/_wait_deadline.sql
-- When a wait step's task that starts waiting now wakes (since 0021): a signal's timeout (NULL:
-- never), a sleep's end - `seconds` after now, or the timestamp `until` names in the step's
-- input. A sleep whose `until` finds no ISO 8601 timestamp there is due at once, with the reason
-- as `error_message` (_settle_waits fails the task with it).
-- "Now" is the wall clock (clock_timestamp(), since 0027), not the transaction's start: the
-- caller is often a worker's complete_task transaction, which may have begun long before, and
-- a deadline counted from then could be past already. A timestamp without an explicit offset
-- (or zone) is read as UTC (since 0027: the function pins timezone = UTC), so the same run
-- input wakes at the same instant whatever the TimeZone of the session that started the step;
-- before, it was read in that session's TimeZone.
-- Locks: none.
-- Called by: _start_waiting_tasks, resume_run.
create or replace function pgflow._wait_deadline(p_run pgflow.runs, p_step_slug text, p_wait jsonb,
                                                 out wake_at timestamptz, out error_message text)
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set timezone = 'UTC'  -- an `until` without an offset is UTC (see above)
as $$
declare
  v_value jsonb;
begin
  if p_wait->>'kind' = 'signal' then
    wake_at := clock_timestamp() + make_interval(secs => (p_wait->>'timeout')::int);
  elsif p_wait ? 'seconds' then
    wake_at := clock_timestamp() + make_interval(secs => (p_wait->>'seconds')::int);
  else
    -- The single step's input, as its handler would get it: the run input and each
    -- dependency's output.
    v_value := (jsonb_build_object('run', p_run.input)
                || coalesce((select jsonb_object_agg(d.dep_slug, ss.output)
                             from pgflow.deps d
                             join pgflow.step_states ss on ss.run_id = p_run.run_id
                                                       and ss.step_slug = d.dep_slug
                             where d.flow_slug = p_run.flow_slug and d.step_slug = p_step_slug),
                            '{}'::jsonb))
               #> array(select jsonb_array_elements_text(p_wait->'until'));
    begin
      -- An ISO 8601 date and time (PostgreSQL would also take words such as 'infinity').
      if jsonb_typeof(v_value) is distinct from 'string'
         or (v_value #>> '{}') !~ '^\d{4}-\d{2}-\d{2}([ T]|$)' then
        raise invalid_datetime_format;
      end if;
      wake_at := (v_value #>> '{}')::timestamptz;
    exception when others then  -- (only the cast above can raise)
      error_message := format(
        'Sleep step "%s" found no ISO 8601 timestamp at %s of its input (found %s)', p_step_slug,
        array_to_string(array(select jsonb_array_elements_text(p_wait->'until')), '.'),
        coalesce(left(v_value::text, 100), 'nothing'));
      wake_at := clock_timestamp();
    end;
  end if;
end;
$$;

-- ---- sql/schema/functions/waits/_resolve_waiting_task.sql
-- Ends a waiting task (since 0021): completes it with `p_output` (a signal's payload, a sleep's
-- end, a timeout's timeoutOutput) through complete_task, or, with `p_error`, fails it through
-- _fail_task as its last attempt (a wait is not retried), so the step's when_exhausted decides:
-- fail the run, skip the step, or skip it and everything downstream. Returns false, changing
-- nothing, when the task is not waiting (anymore).
-- Locks: the caller holds the run; step state -> task (as complete_task and _fail_task take
-- them again).
-- Called by: _settle_waits, send_signal.
create or replace function pgflow._resolve_waiting_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                                        p_output jsonb, p_error text default null)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform 1 from pgflow.step_states ss
  where ss.run_id = p_run_id and ss.step_slug = p_step_slug for update;
  -- complete_task and _fail_task end started tasks only: the wait ends as a start would.
  update pgflow.step_tasks t set status = 'started', started_at = greatest(now(), t.queued_at), wake_at = null
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
    and t.status = 'waiting';
  if not found then
    return false;
  end if;
  if p_error is null then
    perform pgflow.complete_task(p_run_id, p_step_slug, p_task_index, p_output);
  else
    perform pgflow._fail_task(p_run_id, p_step_slug, p_task_index, p_error, true);
  end if;
  return true;
end;
$$;

-- ---- sql/schema/functions/waits/_settle_waits.sql
-- Ends every waiting task of a run that can end now (since 0021), in (step, task index) order:
-- a task with a buffered signal takes it (the signal is consumed, its payload the output); a
-- due task wakes - a sleep completes with {"until": its wake time}, a timed-out wait completes
-- with its timeoutOutput or fails (a sleep that found no timestamp fails with the reason).
-- Stops when the run ends on the way (a failure, or a skip-cascade that ended it).
-- Returns how many tasks it ended. Due means wake_at at or before the wall clock when the call
-- began (since 0027, when _wait_deadline counts deadlines from the wall clock too: a sleep of
-- 0 s started in this transaction is due at once).
-- Locks: the caller holds the run; step states -> tasks -> signals (_resolve_waiting_task).
-- Called by: start_ready_steps and start_flow_by_slug (after starting wait steps), resume_run,
-- wake_waiting_tasks.
create or replace function pgflow._settle_waits(p_run_id uuid) returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_task record;
  v_ended int := 0;
  v_now timestamptz := clock_timestamp();
begin
  for v_task in
    select t.step_slug, t.task_index, t.wake_at, t.error_message, s.wait, g.signal_id, g.payload
    from pgflow.step_tasks t
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
    left join pgflow.signals g on g.run_id = t.run_id and g.step_slug = t.step_slug
                              and g.task_index = t.task_index and g.consumed_at is null
    where t.run_id = p_run_id and t.status = 'waiting'
      and (g.signal_id is not null or t.wake_at <= v_now)
    order by t.step_slug, t.task_index
  loop
    exit when (select r.status from pgflow.runs r where r.run_id = p_run_id) <> 'started';
    if v_task.signal_id is not null then
      if pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index, v_task.payload) then
        update pgflow.signals g set consumed_at = now()
        where g.run_id = p_run_id and g.step_slug = v_task.step_slug
          and g.task_index = v_task.task_index and g.signal_id = v_task.signal_id;
        v_ended := v_ended + 1;
      end if;
    elsif v_task.error_message is not null
          or (v_task.wait->>'kind' = 'signal' and not v_task.wait ? 'timeoutOutput') then
      if pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index, null,
           coalesce(v_task.error_message,
                    format('Step "%s" waited %s s for a signal and timed out', v_task.step_slug,
                           v_task.wait->>'timeout'))) then
        v_ended := v_ended + 1;
      end if;
    elsif pgflow._resolve_waiting_task(p_run_id, v_task.step_slug, v_task.task_index,
            case when v_task.wait->>'kind' = 'signal' then v_task.wait->'timeoutOutput'
                 else jsonb_build_object('until', v_task.wake_at) end) then
      v_ended := v_ended + 1;
    end if;
  end loop;
  return v_ended;
end;
$$;

-- ---- sql/schema/functions/claims/_classify_claim_batch.sql
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
