-- pgflow SQL core, 0015: the hot path (starts, claims, results) cheaper per task.
--
--   * Indexes: each status change of a task or step state writes an entry into every index
--     whose predicate its new row matches (the update cannot be HOT: status is indexed), so a
--     task's life (insert, claim, completion) wrote 14 index entries into step_tasks and a
--     step's 9 into step_states. Kept: what a query needs. step_tasks: the primary key, the
--     (queue_name, message_id) key of claims, idx_step_tasks_queued (flow_slug, queued tasks:
--     status --metrics) and idx_step_tasks_started (last_worker_id, running tasks: stall
--     recovery and release_claim) - 8 entries a task. step_states: the primary key only (every
--     query reaches them by run). runs: idx_runs_status dropped (no query reads runs by status
--     alone). Queries by run and step that had a partial index per status use the primary key.
--   * Foreign keys implied by others dropped (each costs a lookup and a row lock per insert; the
--     lock on the flow's row was taken three times per start): step_states.flow_slug (its
--     (flow_slug, step_slug) references a step of that flow), step_tasks.flow_slug and
--     step_tasks.run_id (its (run_id, step_slug) references a step state, which references
--     both). A flow, run or step state still cannot be deleted while anything refers to it.
--   * _delete_flow_contents reaches a flow's tasks and step states through its runs.
--   * claim_tasks starts its tasks with one UPDATE (TID scans) instead of one per message.
--   * Events: _emit_events(step states, runs) publishes a batch of events in one call (set-based
--     pg_notify; one catalog check for realtime.send), replacing _emit; complete_tasks
--     publishes its batch's step and run events with it, _emit_step_events too.
--   * Run ids are time-ordered UUIDs (version 7, _new_run_id; the default of runs.run_id too):
--     random ones put every start's inserts on a random leaf page of three primary keys.
--   * start_flow_by_slug reads the flow's steps once, and skips _advance_run when its root
--     steps were created started (nothing else can be ready then).
--
-- Data: no row, queue or message changes. Locks: ACCESS EXCLUSIVE on pgflow.step_tasks,
-- pgflow.step_states and pgflow.runs (DROP INDEX), SHARE on pgflow.step_tasks while its two
-- changed indexes are built (one pass over the table each), and those of CREATE OR REPLACE
-- FUNCTION. Applied by the pgflow migration runner in one transaction. Immutable once released.

set local check_function_bodies = off;

alter table pgflow.step_states drop constraint step_states_flow_slug_fkey;
alter table pgflow.step_tasks drop constraint step_tasks_flow_slug_fkey;
alter table pgflow.step_tasks drop constraint step_tasks_run_id_fkey;

drop index pgflow.idx_runs_status;
drop index pgflow.idx_step_states_ready;
drop index pgflow.idx_step_states_failed;
drop index pgflow.idx_step_states_skipped;
drop index pgflow.idx_step_states_flow_slug;
drop index pgflow.idx_step_states_run_id;
drop index pgflow.idx_step_tasks_queued;
drop index pgflow.idx_step_tasks_completed;
drop index pgflow.idx_step_tasks_failed;
drop index pgflow.idx_step_tasks_flow_run_step;
drop index pgflow.idx_step_tasks_started;
drop index pgflow.idx_step_tasks_queued_msg;
drop index pgflow.idx_step_tasks_last_worker;
create index idx_step_tasks_queued on pgflow.step_tasks (flow_slug) where status = 'queued';
create index idx_step_tasks_started on pgflow.step_tasks (last_worker_id) where status = 'started';

drop function pgflow._emit(jsonb, text, text, pgflow.runs, pgflow.step_states, text);

-- ---- sql/schema/functions/runtime/_new_run_id.sql
-- A new run id: a time-ordered UUID (version 7: the first 48 bits are the Unix time in
-- milliseconds, the rest random, as RFC 9562 lays it out; since 0015, version 4 before). Run ids
-- lead the primary keys of runs, step_states and step_tasks: random ones sent every start's
-- inserts to a random leaf page of each, so with more history than fits in memory a start read
-- and dirtied pages all over the indexes (and wrote each one's full image to WAL once per
-- checkpoint); time-ordered ones append near the right edge. A run id still says nothing a
-- reader of the run cannot see (its started_at).
-- Called by: start_flow_by_slug (runs without a caller's id), the default of runs.run_id.
create or replace function pgflow._new_run_id() returns uuid
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  -- gen_random_uuid() gives the random bits and the variant; the version nibble becomes 7
  -- (0100 -> 0111: bits 52 and 53 of the bytea, numbered from each byte's low bit).
  select encode(set_bit(set_bit(
           overlay(uuid_send(gen_random_uuid())
                   placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                   from 1 for 6),
           52, 1), 53, 1), 'hex')::uuid
$$;

-- ---- sql/schema/functions/definitions/_delete_flow_contents.sql
-- Empties a flow - its runs, steps and private queues - and keeps its identity row (and so its
-- alias membership and activation), in one transaction, following seed 000's deletion steps:
--   1. lock the flow identity; collect and validate its route (the distinct steps.queue_name:
--      the private step queues in queue mode `step`; plus, in mode `flow`, an owned default
--      queue lower(flow_slug) of a flow without steps), the task snapshots, the exact
--      pgmq.meta spelling and both tables of each queue, and that no other flow references
--      them;
--   2. lock its runs (run_id order), like callbacks and recovery do;
--   3. delete runtime rows and step definitions, keeping the flow row and the validated names;
--   4. drop exactly those queues (with their archives): no per-message archiving first.
-- Anything missing, ambiguous, malformed or referenced elsewhere fails the whole call.
-- Locks: definition lock -> flow row FOR NO KEY UPDATE -> runs FOR UPDATE -> (deletes) -> queues.
-- Called by: delete_flow_and_data (then step 5: the flow row), ensure_flow_compiled (local
-- recompilation, then the new definition).
create or replace function pgflow._delete_flow_contents(p_flow_slug text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_route text[];
  v_stray text;
  v_queue text;
  v_spellings text[] := '{}';
begin
  perform pgflow._lock_flow_definition(p_flow_slug);
  -- NO KEY UPDATE, not UPDATE: callbacks holding a run lock take FOR KEY SHARE on this row
  -- (foreign-key checks of step_states/step_tasks), so FOR UPDATE here would deadlock with
  -- them while this waits for their runs below.
  select * into v_flow from pgflow.flows f where f.flow_slug = p_flow_slug for no key update;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;

  v_route := array(select distinct s.queue_name from pgflow.steps s
                   where s.flow_slug = p_flow_slug order by 1);
  -- Only a flow in queue mode `flow` has a default queue; without steps it owns that queue
  -- only if the queue was created together with the flow.
  if v_flow.queue_mode = 'flow' and not lower(p_flow_slug) = any(v_route) and exists (
       select 1 from pgmq.meta m
       where lower(m.queue_name) = lower(p_flow_slug) and m.created_at = v_flow.created_at) then
    v_route := v_route || lower(p_flow_slug);
  end if;

  -- A flow's tasks and step states are reached through its runs (no index by flow since 0015).
  select t.queue_name into v_stray
  from pgflow.runs r join pgflow.step_tasks t on t.run_id = r.run_id
  where r.flow_slug = p_flow_slug and t.flow_slug = p_flow_slug and not t.queue_name = any(v_route)
  limit 1;
  if found then
    raise exception 'Flow "%" has tasks in queue "%", which is not on its route; refusing to delete',
      p_flow_slug, v_stray using errcode = 'object_in_use';
  end if;
  foreach v_queue in array v_route loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
       or exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of flow "%" is also referenced by another flow; refusing to drop it',
        v_queue, p_flow_slug using errcode = 'object_in_use';
    end if;
    v_spellings := v_spellings || pgflow._queue_meta_name(v_queue);
  end loop;

  perform 1 from pgflow.runs r where r.flow_slug = p_flow_slug order by r.run_id for update;
  delete from pgflow.step_tasks t using pgflow.runs r
  where r.flow_slug = p_flow_slug and t.run_id = r.run_id and t.flow_slug = p_flow_slug;
  delete from pgflow.step_states s using pgflow.runs r
  where r.flow_slug = p_flow_slug and s.run_id = r.run_id and s.flow_slug = p_flow_slug;
  delete from pgflow.runs r where r.flow_slug = p_flow_slug;
  delete from pgflow.deps d where d.flow_slug = p_flow_slug;
  delete from pgflow.steps s where s.flow_slug = p_flow_slug;
  foreach v_queue in array v_spellings loop
    perform pgmq.drop_queue(v_queue);
  end loop;
end;
$$;

-- ---- sql/schema/functions/events/_emit_events.sql
-- Publishes state changes: each step state of `p_states` as step:<slug>:<status>, then each run
-- of `p_runs` as run:<status> (in array order; `p_error_message` goes with failed runs). The
-- one place events go out (since 0015; _emit before), so a batch of results publishes all its
-- events in one call:
--   * pg_notify on channel pgflow_events, one notification per event with only event (the
--     event type), run_id, flow_slug, step_slug and status, far below NOTIFY's 8000-byte
--     limit and never carrying data; set-based. Setting pgflow.notify_events to off turns it
--     off (per database, role or session; docs/observability.md): a transaction that notifies
--     takes a cluster-wide lock from its commit until the commit's WAL flush is done, so
--     notifying producers and reporters commit one at a time.
--   * when realtime.send(jsonb, text, text, boolean) exists (Supabase), upstream's broadcast,
--     on topic pgflow:run:<run_id> with upstream's payload (_run_event_details,
--     _step_event_details): built only then, since a run's input or a step's output can be
--     large.
-- Called by: _emit_run_event, _emit_step_event, complete_tasks.
create or replace function pgflow._emit_events(p_states pgflow.step_states[], p_runs pgflow.runs[],
                                               p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  -- Events in order: the steps (array order), then the runs.
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', e.note)
    from (select jsonb_strip_nulls(jsonb_build_object(
                   'event', 'step:' || s.status, 'run_id', s.run_id, 'flow_slug', s.flow_slug,
                   'step_slug', s.step_slug, 'status', s.status))::text as note, 1 as part, s.n
          from (select (p_states[i]).*, i as n from generate_subscripts(p_states, 1) i) s
          union all
          select jsonb_build_object('event', 'run:' || r.status, 'run_id', r.run_id,
                                    'flow_slug', r.flow_slug, 'status', r.status)::text, 2, r.n
          from (select (p_runs[i]).*, i as n from generate_subscripts(p_runs, 1) i) r) e
    order by e.part, e.n;
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering.
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector) then
    perform realtime.send(e.payload, e.event, 'pgflow:run:' || e.run_id, false)
    from (select jsonb_build_object('event_type', 'step:' || (p_states[i]).status,
                                    'run_id', (p_states[i]).run_id,
                                    'step_slug', (p_states[i]).step_slug,
                                    'status', (p_states[i]).status)
                 || pgflow._step_event_details(p_states[i]) as payload,
                 'step:' || (p_states[i]).step_slug || ':' || (p_states[i]).status as event,
                 (p_states[i]).run_id, 1 as part, i as n
          from generate_subscripts(p_states, 1) i
          union all
          select jsonb_build_object('event_type', 'run:' || (p_runs[i]).status,
                                    'run_id', (p_runs[i]).run_id,
                                    'flow_slug', (p_runs[i]).flow_slug,
                                    'status', (p_runs[i]).status)
                 || pgflow._run_event_details(p_runs[i], p_error_message),
                 'run:' || (p_runs[i]).status, (p_runs[i]).run_id, 2, i
          from generate_subscripts(p_runs, 1) i) e
    order by e.part, e.n;
  end if;
end;
$$;

-- ---- sql/schema/functions/events/_emit_run_event.sql
-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- (_emit_events builds and publishes it; the part beyond ids and status - inputs and outputs
-- can be large - only when it is broadcast, by _run_event_details.)
-- Called by: start_flow, maybe_complete_run, _fail_run.
create or replace function pgflow._emit_run_event(p_run pgflow.runs, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(null, array[p_run], p_error_message);
end;
$$;

-- ---- sql/schema/functions/events/_emit_step_event.sql
-- Publishes a step's current status as step:<slug>:<status>, with upstream's payload for it:
--   step:started    started_at, remaining_tasks, remaining_deps
--   step:completed  output, completed_at; a taskless step (initial_tasks = 0, completed
--                   without tasks) also started_at, remaining_tasks and remaining_deps
--   step:failed     error_message, failed_at
--   step:skipped    skip_reason, skipped_at, and flow_slug; a step skipped because its
--                   handler failed carries error_message instead of flow_slug (as upstream)
-- (_emit_events builds and publishes it; the part beyond ids and status - outputs can be
-- large - only when it is broadcast, by _step_event_details.)
-- Called by: _enqueue_step_tasks, complete_task, _fail_type_violation, _fail_task,
-- cascade_resolve_conditions, resume_run, cancel_run.
create or replace function pgflow._emit_step_event(p_state pgflow.step_states)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(array[p_state], null);
end;
$$;

-- ---- sql/schema/functions/events/_emit_step_events.sql
-- Publishes the current status of several steps of one run, in the order given (event order
-- is part of the contract: a parent's event before its dependents').
-- Called by: cascade_resolve_conditions, cascade_complete_taskless_steps, _cascade_force_skip_steps.
create or replace function pgflow._emit_step_events(p_run_id uuid, p_step_slugs text[])
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit_events(array(
    select ss from pgflow.step_states ss
    join unnest(p_step_slugs) with ordinality u(slug, n) on ss.step_slug = u.slug
    where ss.run_id = p_run_id order by u.n), null);
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow_by_slug.sql
-- Starts a run of the concrete flow `flow_slug` (a pinned version, whatever its alias's active
-- version is): checks the input (a flow with a root map needs an array), creates the run and one
-- step state per step (root steps already started, with their tasks and messages, when no root
-- step has a condition and no root map is empty), publishes run:started, then advances the run
-- (conditions, taskless steps, other ready steps get their tasks and messages; a run without
-- tasks completes at once) unless its root steps were created started (nothing else can be
-- ready then).
-- Locks: the new run's rows only (nobody else can see them before commit); queue rows last.
-- Called by: start_flow (after resolving the alias), start_flow_with_states_by_slug (and so
-- Client::start_flow_by_slug); SQL users.
create or replace function pgflow.start_flow_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step_count int;
  v_has_root_map boolean;
  v_has_root_condition boolean;
  v_roots_start boolean;
  v_step record;
begin
  -- The flow's steps in one read (since 0015); the flow itself only when it has none.
  select count(*),
         coalesce(bool_or(s.deps_count = 0 and s.step_type = 'map'), false),
         coalesce(bool_or(s.deps_count = 0 and (s.required_input_pattern is not null
                                                or s.forbidden_input_pattern is not null)), false)
  into v_step_count, v_has_root_map, v_has_root_condition
  from pgflow.steps s
  where s.flow_slug = start_flow_by_slug.flow_slug;
  if v_step_count = 0
     and not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow_by_slug.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow_by_slug.flow_slug using errcode = 'no_data_found';
  end if;
  if v_has_root_map and start_flow_by_slug.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow_by_slug.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow_by_slug.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow_by_slug.flow_slug, jsonb_typeof(start_flow_by_slug.input);
  elsif start_flow_by_slug.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  -- A caller's own run id (an idempotent start, retry_run's new_run_id) may be taken: say so
  -- instead of the primary key's error. (Only then: the usual start pays no extra probe.)
  if start_flow_by_slug.run_id is not null then
    select * into v_run from pgflow.runs r where r.run_id = start_flow_by_slug.run_id;
    if found then
      raise exception 'Run id % is taken: a run of flow "%" started with it at %; start with another id, or read that run (a repeated start finds its first)',
        v_run.run_id, v_run.flow_slug, v_run.started_at
        using errcode = 'unique_violation';
    end if;
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow_by_slug.run_id, pgflow._new_run_id()), start_flow_by_slug.flow_slug, start_flow_by_slug.input,
          v_step_count)
  returning * into v_run;

  -- In the common case — no root step has a condition and no root map is empty — nothing can
  -- happen at start before the root steps start, so they are created started: what
  -- start_ready_steps would do next, without updating rows this statement inserts (which would
  -- run their foreign-key checks again). Otherwise (a condition may skip steps or fail the run;
  -- an empty root map completes at once and may make other steps ready) every step is created
  -- and _advance_run starts what is ready, in its usual order.
  v_roots_start := not v_has_root_condition;
  if v_roots_start and v_has_root_map then
    v_roots_start := jsonb_array_length(start_flow_by_slug.input) > 0;  -- an array (checked above)
  end if;
  insert into pgflow.step_states (flow_slug, run_id, step_slug, remaining_deps, initial_tasks,
                                  status, started_at, remaining_tasks)
  select x.flow_slug, v_run.run_id, x.step_slug, x.deps_count, x.initial_tasks,
         case when x.starts then 'started' else 'created' end,
         case when x.starts then now() end,
         case when x.starts then x.initial_tasks end
  from (
    select s.flow_slug, s.step_slug, s.deps_count, t.initial_tasks,
           v_roots_start and s.deps_count = 0 as starts
    from pgflow.steps s
    cross join lateral (select
      -- (the inner CASE keeps constant folding from evaluating the length of a non-array)
      case when s.step_type = 'map' and s.deps_count = 0
             then jsonb_array_length(case when jsonb_typeof(v_run.input) = 'array' then v_run.input end)
           when s.step_type = 'map' then null
           else 1 end as initial_tasks) t
    where s.flow_slug = v_run.flow_slug) x;

  perform pgflow._emit_run_event(v_run);
  for v_step in
    select ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'started'
    order by ss.step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay);
  end loop;

  -- With its root steps started, a run with steps has nothing else ready and cannot be done
  -- (every other step waits for a dependency): _advance_run would find nothing to do.
  if not (v_roots_start and v_step_count > 0) then
    perform pgflow._advance_run(v_run.run_id);
  end if;
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
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
  v_finished pgflow.step_states[];
  v_advance uuid[];
  v_completed pgflow.runs[];
  v_queues text[];
  v_message_ids bigint[];
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value order by r.n)
  into v_run_ids, v_steps, v_indexes, v_outputs
  from pgflow._task_results(results, 'complete_tasks', 'output') with ordinality
       r(run_id, step_slug, task_index, value, pos, n);
  -- One result: complete_task is the same thing, without the batch machinery.
  if cardinality(v_run_ids) = 1 then
    return query select * from pgflow.complete_task(v_run_ids[1], v_steps[1], v_indexes[1], v_outputs[1]);
    return;
  end if;
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
  set status = 'completed', completed_at = now(), output = b.output
  from unnest(v_run_ids, v_steps, v_indexes, v_outputs, v_kinds) b(run_id, step_slug, task_index, output, kind)
  where b.kind = 'complete' and t.run_id = b.run_id and t.step_slug = b.step_slug
    and t.task_index = b.task_index
  returning t.*;

  with counted as (
    update pgflow.step_states ss
    set remaining_tasks = ss.remaining_tasks - b.n,
        status = case when ss.remaining_tasks = b.n then 'completed' else ss.status end,
        completed_at = case when ss.remaining_tasks = b.n then now() else ss.completed_at end,
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
    returning ss)
  select array_agg(c.ss order by (c.ss).run_id) filter (where (c.ss).status = 'completed')
  into v_finished
  from counted c;

  if v_finished is not null then
    -- Children of the completed steps lose a pending dependency (as _release_children; at
    -- most one completed step per run here); a map child learns its task count.
    update pgflow.step_states c
    set remaining_deps = c.remaining_deps - 1,
        initial_tasks = case when cs.step_type = 'map'
                             then case when jsonb_typeof(f.output) = 'array'
                                       then jsonb_array_length(f.output) end
                             else c.initial_tasks end
    from unnest(v_finished) f
    join pgflow.deps d on d.flow_slug = f.flow_slug and d.dep_slug = f.step_slug
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    where c.run_id = f.run_id and c.step_slug = d.step_slug and c.status = 'created';

    with counted as (
      update pgflow.runs r set remaining_steps = r.remaining_steps - 1
      from unnest(v_finished) f
      where r.run_id = f.run_id
      returning r.run_id, r.remaining_steps)
    select array_agg(c.run_id order by c.run_id) filter (where c.remaining_steps > 0)
    into v_advance
    from counted c;

    -- Runs without steps left complete (maybe_complete_run for all of them at once), and the
    -- batch's events go out in one call (the steps', then the runs'); the others move on.
    with done as (
      update pgflow.runs r
      set status = 'completed', completed_at = now(), output = pgflow._run_output(r.run_id)
      from unnest(v_finished) f
      where r.run_id = f.run_id and r.status = 'started' and r.remaining_steps = 0
      returning r)
    select array_agg(d.r order by (d.r).run_id) into v_completed from done d;
    perform pgflow._emit_events(v_finished, v_completed);
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

-- ---- sql/schema/functions/claims/claim_tasks.sql
-- The queue-aware claim boundary: claims a batch of messages a worker read from `queue_name`
-- for `flow_slug` (and, for a flow in queue mode `step`, its step `step_slug`: the exact step
-- selector), one pgflow.claim_record per message.
--
-- The worker's subscription is validated first: a registered worker on this queue; in queue
-- mode `flow` no step and the flow's queue; in mode `step` a step whose private queue this is
-- (the exact flow/step/queue route must exist). Then then every message is looked up by (queue_name, message_id) and the complete batch is
-- classified before anything changes. Without a fatal message, one transaction claims the
-- eligible tasks (visible again after the step's effective timeout + 2 s), defers running ones,
-- and archives finished or clearly foreign messages. With any fatal message - pgflow-shaped
-- work whose task is missing or on another route (another flow or step) - nothing is claimed or archived: the whole
-- batch is made visible again, the worker's function is paused (pgflow.worker_functions), and
-- the fatal outcome is returned (not raised, so the reset and the pause commit). A message is
-- "clearly foreign" only when its body carries none of pgflow's address keys (flow_slug,
-- run_id, step_slug, task_index); anything else without a matching task is fatal.
-- Applications must not send messages to pgflow-owned queues.
--
-- Steps: 1. the subscription; 2. classify the batch (_classify_claim_batch); 3a. a fatal batch:
-- reset, pause, report (_refuse_claim_batch); 3b. claim (one UPDATE since 0015), 3c. defer,
-- 3d. archive; 4. one row per message.
-- Plans: tasks and runs are reached by row address (ctid) or by index probes per message, never
-- by joins planned from statistics, which a burst of work makes stale (bench/README.md).
-- `claim_id` (worker protocol 6, schema 0014) is an id the worker chose for this call: the
-- claimed tasks record it (step_tasks.last_claim_id), so a worker whose connection broke before
-- the reply arrived can give them back at once (release_claim) instead of leaving them to stall
-- recovery. The overload without it (protocols 4 and 5, start_tasks) records none.
-- Locks: queue rows (the caller's pgmq.read) -> runs FOR SHARE (run_id order) -> task rows.
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
  v_archive bigint[];
  v_visible int;
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

-- ---- after the functions: a column default that calls one of them
alter table pgflow.runs alter column run_id set default pgflow._new_run_id();
