-- pgflow SQL core, 0014: faults that cost time or correctness.
--
--   * One lock order: nobody holding a run waits for a queue message. complete_task(s),
--     fail_task(s) (a retry's backoff), stall recovery and cancellations leave a message a
--     worker's read holds (SKIP LOCKED) to that worker's claim, which handles it by its task's
--     state once the run is free; before, a result could hold the run while waiting for a
--     message whose reader waited for the run (40P01). (_archive_messages always skips held
--     messages and loses its p_skip_locked argument; _archive_task_message and
--     _set_task_message_vt skip them too.)
--   * Claims whose reply was lost: claim_tasks(..., step_slug, claim_id) records the worker's
--     id for the call on the tasks it starts (step_tasks.last_claim_id, a new nullable column),
--     and release_claim(worker_id, claim_id) gives them back at once. The claim_tasks of
--     protocols 4 and 5 is kept (it records no id); roles that may call it may call both new
--     functions.
--   * Permanent failures: a fail_tasks result with "permanent": true fails its task on that
--     attempt whatever attempts remain, its message ending " (permanent: not retried)".
--   * Worker protocol 6 (claim ids, release_claim, permanent failures); 4 and 5 still accepted.
--   * cancel_run fails every step that had not ended (created or started), with the
--     cancellation's message and a step:failed event each; resume_run starts them again.
--   * A raw DELETE FROM pgflow.flows of a flow that is its own alias removes the alias row too
--     (trigger flows_delete_own_alias); an active version of another alias is refused with an
--     error naming delete_flow_and_data.
--   * register_worker refuses a function name outside 1..256 bytes (22023) instead of failing
--     on the primary key's btree row size.
--   * Clearer errors: a start with a run id that is taken names it and its run (23505, was the
--     primary key's message); run-control hints name the C++ call and the CLI command too;
--     activate_flow_version's compare-and-swap conflict reads "has no active version" / "but no
--     active version was expected".
--   * A timed-out lock wait names sessions of this database only (_lock_holders): a database
--     cloned from the same template has tables of the same OIDs.
--   * Events build upstream's broadcast payload (inputs and outputs) only when realtime.send
--     exists: _emit takes the run or step state and builds it then (_run_event_details,
--     _step_event_details).
--
-- Data: one nullable column added (no rewrite); no row, queue or message changes. Locks:
-- ACCESS EXCLUSIVE on pgflow.step_tasks (ADD COLUMN, brief) and pgflow.flows (CREATE
-- TRIGGER), and those of CREATE OR REPLACE FUNCTION. Applied by the pgflow migration runner in
-- one transaction. Immutable once released.

set local check_function_bodies = off;

alter table pgflow.step_tasks add column last_claim_id uuid;

drop function pgflow._archive_messages(text[], bigint[], boolean);

drop function pgflow._emit(jsonb, text, text);

-- ---- sql/schema/functions/locks/_lock_holders.sql
-- Who holds a lock pgflow gave up waiting for, for error messages and warnings: the other
-- sessions whose transaction began before p_since (a session that held the lock through the
-- whole wait began before the wait did; busy workers with short transactions do not) and that
-- hold transaction p_locker (the xmax of the row waited for), or, when that names nobody (a
-- row still being inserted is invisible to the waiter; several share lockers), a row or table
-- lock on p_table - on any table of schemas pgflow and pgmq when p_table is NULL - in this
-- database (a database cloned from the same template has tables of the same OIDs).
-- Returns e.g. 'pid 4711 (role app, application psql, idle in transaction, transaction open
-- for 00:02:05)', several joined with '; ', or 'no session found (the holder may have finished)'.
-- pg_locks and pg_stat_activity are readable by every role (no query text is shown).
-- Called by: _raise_lock_timeout, EdgeWorker's stall recovery warning.
create or replace function pgflow._lock_holders(p_locker xid, p_table regclass, p_since timestamptz)
returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_pids int[];
begin
  v_pids := array(select l.pid from pg_locks l
                  where l.granted and l.locktype = 'transactionid' and l.transactionid = p_locker);
  if cardinality(v_pids) = 0 then
    v_pids := array(select l.pid from pg_locks l join pg_class c on c.oid = l.relation
                    where l.granted and l.locktype = 'relation' and l.mode <> 'AccessShareLock'
                      and l.database = (select d.oid from pg_database d
                                        where d.datname = current_database())
                      and case when p_table is null
                               then c.relnamespace in ('pgflow'::regnamespace, 'pgmq'::regnamespace)
                               else c.oid = p_table end);
  end if;
  return coalesce(
    (select string_agg(format('pid %s (role %s, application %s, %s, transaction open for %s)',
                              a.pid, coalesce(quote_ident(a.usename::text), 'unknown'),
                              case when a.application_name = '' then 'unnamed'
                                   else quote_ident(a.application_name) end,
                              coalesce(a.state, 'state unknown'),
                              date_trunc('second', clock_timestamp() - a.xact_start)),
                       '; ' order by a.xact_start, a.pid)
     from pg_stat_activity a
     where a.pid = any(v_pids) and a.pid <> pg_backend_pid() and a.xact_start < p_since),
    'no session found (the holder may have finished)');
end;
$$;

-- ---- sql/schema/functions/definitions/_flows_before_delete.sql
-- Trigger on pgflow.flows, before a row is deleted: a raw `DELETE FROM pgflow.flows` (upstream's
-- test helpers and some scripts clear tables so, children first) works for a flow that is its
-- own alias and its alias's only version: the alias row goes with it, as
-- delete_flow_and_data does. A flow that is the active version of another alias, or of one
-- with other versions, is refused with an error naming delete_flow_and_data (which says what
-- to do first), instead of the foreign key's.
-- Called by: the trigger flows_delete_own_alias (DELETE on pgflow.flows).
create or replace function pgflow._flows_before_delete() returns trigger
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if old.flow_alias = old.flow_slug
     and not exists (select 1 from pgflow.flows f
                     where f.flow_alias = old.flow_alias and f.flow_slug <> old.flow_slug) then
    delete from pgflow.flow_aliases a where a.flow_alias = old.flow_alias and a.flow_slug = old.flow_slug;
  end if;
  if exists (select 1 from pgflow.flow_aliases a where a.flow_slug = old.flow_slug) then
    raise exception 'Flow "%" is the active version of alias "%"; delete it with pgflow.delete_flow_and_data(%), not DELETE FROM pgflow.flows',
      old.flow_slug, old.flow_alias, quote_literal(old.flow_slug)
      using errcode = 'foreign_key_violation';
  end if;
  return old;
end;
$$;

create trigger flows_delete_own_alias before delete on pgflow.flows
  for each row execute function pgflow._flows_before_delete();

-- ---- sql/schema/functions/definitions/activate_flow_version.sql
-- Makes `flow_slug` the active version of `flow_alias`, by compare-and-swap: only if the alias
-- still points to `expected_current_flow_slug` (NULL: only if the alias has no active version
-- yet). A conflict changes nothing and names the actual current version (SQLSTATE 55000), so a
-- rollout or a rollback never overwrites a change it did not see. The flow must be a member of
-- the alias. Returns the alias row.
-- Locks: the alias lock, the flow's definition lock, then the alias row; every wait is bounded
-- (_bound_lock_waits) and a timeout names the holder.
-- Called by: operators (pgflow activate, Client::activate_flow_version).
create or replace function pgflow.activate_flow_version(flow_alias text, flow_slug text,
                                                        expected_current_flow_slug text)
returns pgflow.flow_aliases
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_member text;
  v_current pgflow.flow_aliases;
  v_row pgflow.flow_aliases;
begin
  if activate_flow_version.flow_alias is null or activate_flow_version.flow_slug is null then
    raise exception 'activate_flow_version(): % must not be NULL',
      case when activate_flow_version.flow_alias is null then 'flow_alias' else 'flow_slug' end
      using errcode = 'null_value_not_allowed';
  end if;
  perform pgflow._lock_flow_alias(activate_flow_version.flow_alias);
  perform pgflow._lock_flow_definition(activate_flow_version.flow_slug);
  select f.flow_alias into v_member from pgflow.flows f where f.flow_slug = activate_flow_version.flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', activate_flow_version.flow_slug using errcode = 'no_data_found';
  elsif v_member <> activate_flow_version.flow_alias then
    raise exception 'Flow "%" is a version of alias "%", not of "%"', activate_flow_version.flow_slug,
      v_member, activate_flow_version.flow_alias using errcode = 'invalid_parameter_value';
  end if;

  select * into v_current from pgflow.flow_aliases a
  where a.flow_alias = activate_flow_version.flow_alias for update;
  if v_current.flow_slug is distinct from expected_current_flow_slug then
    raise exception 'Alias "%" %, but %; nothing changed (read the current version and decide again)',
      activate_flow_version.flow_alias,
      coalesce('points to "' || v_current.flow_slug || '"', 'has no active version'),
      coalesce('"' || expected_current_flow_slug || '" was expected', 'no active version was expected')
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  if v_current.flow_alias is null then
    insert into pgflow.flow_aliases (flow_alias, flow_slug)
    values (activate_flow_version.flow_alias, activate_flow_version.flow_slug)
    returning * into v_row;
  else
    update pgflow.flow_aliases a set flow_slug = activate_flow_version.flow_slug, updated_at = now()
    where a.flow_alias = activate_flow_version.flow_alias
    returning * into v_row;
  end if;
  perform set_config('lock_timeout', v_restore, true);
  return v_row;
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('the row of flow alias "%s"', activate_flow_version.flow_alias),
                                     null, 'pgflow.flow_aliases', v_since, v_error);
end;
$$;

-- ---- sql/schema/functions/queues/_archive_task_message.sql
-- Archives one task's message (if it has one) in the task's queue snapshot, unless a reader
-- holds it (then that reader's claim archives it: see _archive_messages). Idempotent.
-- Locks: the caller holds the task's run; the queue row last, never waited for.
-- Called by: complete_task, _fail_task, _fail_type_violation.
create or replace function pgflow._archive_task_message(p_run_id uuid, p_step_slug text,
                                                        p_task_index int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_msg bigint;
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgflow._archive_messages(array[v_queue], array[v_msg]);
  end if;
end;
$$;

-- ---- sql/schema/functions/queues/_set_task_message_vt.sql
-- Sets the visibility of one task's message to now + p_delay seconds (retry backoff, stall
-- recovery, a released claim) in the task's queue snapshot; a delay of 0 announces the work.
-- A message a reader holds locked is left alone (SKIP LOCKED, as in _archive_messages): that
-- reader's claim, waiting for the run the caller holds, finds the task queued once the caller
-- commits and claims it at once (a retry's backoff is then skipped: the task runs again
-- sooner, never later or twice).
-- Locks: the caller holds the task's run; the queue row last, never waited for.
-- Called by: _fail_task, requeue_stalled_tasks, release_claim.
create or replace function pgflow._set_task_message_vt(p_run_id uuid, p_step_slug text,
                                                       p_task_index int, p_delay int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_msg bigint;
  v_updated int;
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is null then
    return;
  end if;
  -- pgmq.set_vt's update (PGMQ 1.5's columns), of the row only if nobody holds it.
  execute format($sql$
    update pgmq.%1$I q set vt = clock_timestamp() + make_interval(secs => $2)
    where q.msg_id = (select h.msg_id from pgmq.%1$I h where h.msg_id = $1 for update skip locked)
    $sql$, 'q_' || v_queue)
  using v_msg, p_delay;
  get diagnostics v_updated = row_count;
  if v_updated > 0 and p_delay = 0 then
    perform pgflow._announce_work(v_queue);
  end if;
end;
$$;

-- ---- sql/schema/functions/queues/_terminate_tasks.sql
-- Moves every queued or started task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages, one batch per task queue snapshot
-- (_archive_messages, skipping messages a reader holds: its claim archives them): task rows
-- first, then queue rows. The queues of tasks that were started
-- (a worker may be running them) are told to stop them (_announce_stopped_tasks).
-- Locks: the caller holds the run.
-- Called by: _fail_run (and so cancel_run), _cascade_force_skip_steps, _fail_task.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
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

-- ---- sql/schema/functions/queues/_archive_messages.sql
-- Archives task messages given as (queue, message id) pairs: one pgmq.archive per queue, queues
-- in name order, ids sorted; NULL ids (tasks without a message) are skipped. Idempotent.
-- A message another session holds locked is left where it is (SKIP LOCKED): its holder is a
-- worker that has just read it (pgmq.read) and now waits in claim_tasks for the run the caller
-- holds, and waiting for it would deadlock (the reader waits for the run, the caller for the
-- message). Once the caller commits, the reader's claim archives it, because its task has
-- ended (_classify_claim_batch); if the reader's transaction fails instead, the message becomes
-- visible and the next claim does (sql/schema/README.md, "Lock order").
-- Locks: the caller holds the tasks' runs; queue rows last, never waited for.
-- Called by: _terminate_tasks, complete_tasks, _archive_task_message.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[])
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_batch record;
begin
  for v_batch in
    select m.queue_name, array_agg(m.id order by m.id) as ids
    from unnest(p_queue_names, p_message_ids) m(queue_name, id)
    where m.id is not null
    group by m.queue_name
    order by m.queue_name
  loop
    -- pgmq.archive's statement (PGMQ 1.5's columns), taking only the rows nobody holds: one
    -- statement per queue, as pgmq.archive alone was before 0014.
    execute format($sql$
      with held as (
        select q.msg_id from pgmq.%1$I q where q.msg_id = any($1) order by q.msg_id for update skip locked),
      gone as (
        delete from pgmq.%1$I q using held where q.msg_id = held.msg_id
        returning q.msg_id, q.vt, q.read_ct, q.enqueued_at, q.message, q.headers)
      insert into pgmq.%2$I (msg_id, vt, read_ct, enqueued_at, message, headers)
      select msg_id, vt, read_ct, enqueued_at, message, headers from gone
      $sql$, 'q_' || v_batch.queue_name, 'a_' || v_batch.queue_name)
    using v_batch.ids;
  end loop;
end;
$$;

-- ---- sql/schema/functions/events/_emit.sql
-- Publishes one state change: a run's (`p_run`) or a step's (`p_state`), as `event`, upstream's
-- event name (run:<kind> or step:<slug>:<kind>); `payload` carries event_type, run_id, status
-- and, for step events, step_slug. The pg_notify copy on channel pgflow_events keeps only ids,
-- slugs and status, so it stays far below NOTIFY's 8000-byte limit and never carries data;
-- setting pgflow.notify_events to off turns it off (see below; docs/observability.md). When
-- realtime.send(jsonb, text, text, boolean) exists (Supabase), upstream's broadcast goes out
-- too, on topic pgflow:run:<run_id>, with the rest of upstream's payload
-- (_run_event_details, _step_event_details): built only then, since a run's input or a step's
-- output can be large (since 0014).
-- Called by: _emit_run_event, _emit_step_event.
create or replace function pgflow._emit(payload jsonb, event text, flow_slug text,
                                        p_run pgflow.runs default null,
                                        p_state pgflow.step_states default null,
                                        p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  -- pgflow.notify_events = off (per database, role or session) leaves the channel silent: a
  -- transaction that notifies takes a cluster-wide lock from its commit until the commit's WAL
  -- flush is done, so notifying producers and reporters commit one at a time.
  if lower(coalesce(current_setting('pgflow.notify_events', true), '')) not in ('off', 'false', '0', 'no') then
    perform pg_notify('pgflow_events', jsonb_strip_nulls(jsonb_build_object(
      'event', payload->>'event_type',
      'run_id', payload->>'run_id',
      'flow_slug', flow_slug,
      'step_slug', payload->>'step_slug',
      'status', payload->>'status'))::text);
  end if;
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering.
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector) then
    perform realtime.send(
      payload || case when (p_run).run_id is not null then pgflow._run_event_details(p_run, p_error_message)
                      else pgflow._step_event_details(p_state) end,
      event, 'pgflow:run:' || (payload->>'run_id'), false);
  end if;
end;
$$;

-- ---- sql/schema/functions/events/_emit_run_event.sql
-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- The one place run event payloads are built; the part beyond ids and status (inputs and
-- outputs can be large) only when it is broadcast (_emit).
-- Called by: start_flow, maybe_complete_run, _fail_run.
create or replace function pgflow._emit_run_event(p_run pgflow.runs, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'run:' || p_run.status, 'run_id', p_run.run_id,
                       'flow_slug', p_run.flow_slug, 'status', p_run.status),
    'run:' || p_run.status, p_run.flow_slug, p_run => p_run, p_error_message => p_error_message);
end;
$$;


-- ---- sql/schema/functions/events/_run_event_details.sql
-- The broadcast payload of a run event beyond event_type, run_id, flow_slug and status (see
-- _emit_run_event).
-- Called by: _emit, when it broadcasts.
create or replace function pgflow._run_event_details(p_run pgflow.runs, p_error_message text)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  return case p_run.status
           when 'started' then jsonb_build_object('input', p_run.input,
                                                  'remaining_steps', p_run.remaining_steps,
                                                  'started_at', p_run.started_at)
           when 'completed' then jsonb_build_object('output', p_run.output,
                                                    'completed_at', p_run.completed_at)
           else jsonb_build_object('failed_at', p_run.failed_at)
                || case when p_error_message is null then '{}'::jsonb
                        else jsonb_build_object('error_message', p_error_message) end
         end;
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
-- The one place step event payloads are built; the part beyond ids and status (outputs can
-- be large) only when it is broadcast (_emit).
-- Called by: _enqueue_step_tasks, complete_task, _fail_type_violation, _fail_task,
-- cascade_resolve_conditions, _emit_step_events.
create or replace function pgflow._emit_step_event(p_state pgflow.step_states)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'step:' || p_state.status, 'run_id', p_state.run_id,
                       'step_slug', p_state.step_slug, 'status', p_state.status),
    'step:' || p_state.step_slug || ':' || p_state.status, p_state.flow_slug, p_state => p_state);
end;
$$;


-- ---- sql/schema/functions/events/_step_event_details.sql
-- The broadcast payload of a step event beyond event_type, run_id, step_slug and status (see
-- _emit_step_event).
-- Called by: _emit, when it broadcasts.
create or replace function pgflow._step_event_details(p_state pgflow.step_states)
returns jsonb
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  return case p_state.status
       when 'started' then jsonb_build_object('started_at', p_state.started_at,
                                              'remaining_tasks', p_state.remaining_tasks,
                                              'remaining_deps', p_state.remaining_deps)
       when 'completed' then jsonb_build_object('output', p_state.output,
                                                'completed_at', p_state.completed_at)
            || case when p_state.initial_tasks = 0
                    then jsonb_build_object('started_at', p_state.started_at,
                                            'remaining_tasks', p_state.remaining_tasks,
                                            'remaining_deps', p_state.remaining_deps)
                    else '{}'::jsonb end
       when 'failed' then jsonb_build_object('error_message', p_state.error_message,
                                             'failed_at', p_state.failed_at)
       else jsonb_build_object('skip_reason', p_state.skip_reason,
                               'skipped_at', p_state.skipped_at)
            || case when p_state.error_message is null
                    then jsonb_build_object('flow_slug', p_state.flow_slug)
                    else jsonb_build_object('error_message', p_state.error_message) end
     end;
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow_by_slug.sql
-- Starts a run of the concrete flow `flow_slug` (a pinned version, whatever its alias's active
-- version is): checks the input (a flow with a root map needs an array), creates the run and one
-- step state per step (root steps already started, with their tasks and messages, when no root
-- step has a condition and no root map is empty), publishes run:started, then advances the run (conditions, taskless
-- steps, other ready steps get their tasks and messages; a run without tasks completes at once).
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
  v_has_root_map boolean;
  v_has_root_condition boolean;
  v_roots_start boolean;
  v_step record;
begin
  if not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow_by_slug.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow_by_slug.flow_slug using errcode = 'no_data_found';
  end if;
  select coalesce(bool_or(s.step_type = 'map'), false),
         coalesce(bool_or(s.required_input_pattern is not null or s.forbidden_input_pattern is not null), false)
  into v_has_root_map, v_has_root_condition
  from pgflow.steps s
  where s.flow_slug = start_flow_by_slug.flow_slug and s.deps_count = 0;
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
  values (coalesce(start_flow_by_slug.run_id, gen_random_uuid()), start_flow_by_slug.flow_slug, start_flow_by_slug.input,
          (select count(*) from pgflow.steps s where s.flow_slug = start_flow_by_slug.flow_slug))
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

  perform pgflow._advance_run(v_run.run_id);
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;

-- ---- sql/schema/functions/runtime/_lock_run_for_control.sql
-- The run cancel_run, retry_run or resume_run acts on, locked FOR UPDATE (FOR SHARE when
-- `p_for_share`: retry_run only copies it); an unknown run is P0002. With `p_verb` ('retried',
-- 'resumed'), a run that has not failed is refused (55000) naming its status.
-- Locks: the run (lock order position 2); the wait is bounded (_bound_lock_waits) and a
-- timeout names the holder.
-- Called by: cancel_run, retry_run, resume_run.
create or replace function pgflow._lock_run_for_control(p_run_id uuid, p_verb text default null,
                                                        p_for_share boolean default false)
returns pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_since timestamptz := clock_timestamp();
  v_restore text;
  v_run pgflow.runs;
begin
  begin
    v_restore := pgflow._bound_lock_waits();
    if p_for_share then
      select * into v_run from pgflow.runs r where r.run_id = p_run_id for share;
    else
      select * into v_run from pgflow.runs r where r.run_id = p_run_id for update;
    end if;
    perform set_config('lock_timeout', v_restore, true);
  exception when lock_not_available then
    perform pgflow._raise_lock_timeout(format('run "%s"', p_run_id),
                                       (select r.xmax from pgflow.runs r where r.run_id = p_run_id),
                                       'pgflow.runs', v_since);
  end;
  if v_run.run_id is null then
    raise exception 'Run "%" does not exist', p_run_id using errcode = 'no_data_found';
  end if;
  if p_verb is not null and v_run.status <> 'failed' then
    raise exception 'Run "%" is %: only a failed or cancelled run can be %', v_run.run_id, v_run.status, p_verb
      using errcode = 'object_not_in_prerequisite_state',
            hint = case when v_run.status = 'started'
                          then 'Cancel it first: Client::cancel_run, `pgflow run cancel RUN_ID` or pgflow.cancel_run.'
                        else 'Start a new run if it should run again: Client::start_flow, `pgflow start FLOW --input JSON` or pgflow.start_flow.' end;
  end if;
  return v_run;
end;
$$;

-- ---- sql/schema/functions/runtime/cancel_run.sql
-- Cancels a started run in one transaction: the run becomes failed with cancelled_at and
-- `reason` (run:failed, error message "cancelled" or "cancelled: <reason>"); every step that
-- had not ended (created or started) becomes failed with the same error message (step:failed
-- for each, since schema 0014: before, a running step stayed `started` under a cancelled run);
-- every queued or started task becomes cancelled and its message is archived, and workers
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
      set status = 'failed', failed_at = now(), error_message = v_message
      where ss.run_id = v_run.run_id and ss.status in ('created', 'started')
      returning ss.*)
    select * from ended order by step_slug
  loop
    perform pgflow._emit_step_event(v_state);
  end loop;
  return true;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.cancel_run(uuid, text) from public;

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

-- ---- sql/schema/functions/runtime/fail_tasks.sql
-- Reports a batch of handler failures in one call (the worker's reporter): `results` is a
-- JSON array of {"run_id", "step_slug", "task_index", "error_message"}, each with an optional
-- "permanent": true (since schema 0014, worker protocol 6) for a failure no retry can fix (a
-- conversion failure, or a handler's pgflow::permanent status): that attempt is the task's
-- last, whatever attempts remain, and its error message gets " (permanent: not retried)".
-- Every run of the batch is locked first, in run_id order; then each failure is applied
-- exactly as fail_task applies it, in (run_id, step_slug, task_index) order. Failures are rare
-- next to completions, so this saves round trips, not per-task work. Returns the row
-- fail_task returns for each. A "permanent" that is not a JSON boolean is an error (22023)
-- naming the result, and changes nothing.
-- Locks: runs FOR UPDATE in run_id order, then as _fail_task for each result.
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
  v_bad bigint;
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value #>> '{}' order by r.n),
         array_agg(coalesce((results -> (r.pos - 1)::int -> 'permanent') = 'true'::jsonb, false) order by r.n),
         min(r.pos) filter (where jsonb_typeof(results -> (r.pos - 1)::int -> 'permanent') not in ('boolean', 'null'))
  into v_run_ids, v_steps, v_indexes, v_errors, v_permanent, v_bad
  from pgflow._task_results(results, 'fail_tasks', 'error_message') with ordinality r(run_id, step_slug, task_index, value, pos, n);
  if v_bad is not null then
    raise exception 'fail_tasks(): result %: "permanent" must be true or false', v_bad
      using errcode = 'invalid_parameter_value';
  end if;

  perform pgflow._lock_runs(v_run_ids);
  for i in 1 .. cardinality(v_run_ids) loop
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
-- reset, pause, report (_refuse_claim_batch); 3b. claim, 3c. defer, 3d. archive; 4. one row per
-- message.
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
  v_item pgflow._claim_item;
  v_claim bigint[] := '{}';
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

  -- 3b. Claim the eligible tasks (only rows this call changes are the worker's), one by row
  -- address each (a TID scan: no plan to go wrong); a task changed since it was classified no
  -- longer matches, and counts as taken.
  foreach v_item in array v_items loop
    continue when v_item.class <> 'claim';
    update pgflow.step_tasks t
    -- greatest(): a task committed after this transaction began is queued "later" than now().
    set status = 'started', attempts_count = t.attempts_count + 1,
        started_at = greatest(now(), t.queued_at),
        last_worker_id = claim_tasks.worker_id, last_claim_id = claim_tasks.claim_id
    where t.ctid = v_item.task_ctid and t.status = 'queued';
    if found then
      v_claim := v_claim || v_item.msg_id;
    end if;
  end loop;
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

-- ---- sql/schema/functions/claims/release_claim.sql
-- Gives back the tasks one claim_tasks call started for `worker_id` under `claim_id`, when the
-- worker never received that call's reply (its connection broke after the claim committed):
-- each task still started under that claim is queued again as if the claim had not happened
-- (the attempt it counted is taken back) and its message is visible at once (with the queue's
-- announcement), so the work goes on now rather than after stall recovery (step timeout +
-- 30 s). Tasks that have moved on since (completed, cancelled, claimed again) are left alone,
-- and calling it again, or for a claim that never committed, returns 0. Returns how many tasks
-- were given back.
-- Locks: runs FOR UPDATE in run_id order (_lock_runs) -> tasks -> messages, never waited for.
-- Called by: workers (protocol 6), on the first call after a claim whose reply was lost.
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

-- ---- sql/schema/functions/workers/worker_protocol.sql
-- The worker protocol this database speaks. A worker compares it with its own before doing
-- anything else, and the database refuses any protocol it does not support at compilation and
-- registration (_require_worker_protocol: this one and 4).
--   2  queue identity: claim_tasks(queue, flow, ids, worker), register_worker (0002)
--   3  per-step queues: ensure_flow_compiled(..., queue_mode, route_map), claims with a step
--      selector, step workers registered on their step's queue (0004)
--   4  flow aliases: ensure_flow_compiled(..., flow_alias) deploys a version under an alias
--      and reports its activation (0005)
--   5  batch results: complete_tasks(jsonb) / fail_tasks(jsonb) (0006).
--   6  claims carry the worker's claim id (claim_tasks(..., claim_id)) and a claim whose reply
--      was lost is given back (release_claim); failures may be permanent (fail_tasks rows with
--      "permanent": true) (0014).
-- Protocol 4 and 5 workers are still accepted: everything they call works as it did.
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select 6
$$;

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

-- [migration-only: grants]
-- Whoever may claim with the claim_tasks of protocols 4 and 5 (pgflow_worker, through
-- sql/contrib/grants.sql) may claim with an id and give back a lost claim.
do $grants$
declare
  v_role text;
begin
  for v_role in
    select distinct a.grantee::regrole::text
    from pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
    where p.oid = 'pgflow.claim_tasks(text, text, bigint[], uuid, text)'::regprocedure
      and a.privilege_type = 'EXECUTE' and a.grantee <> 0 and a.grantee <> p.proowner
  loop
    execute format('grant execute on function pgflow.claim_tasks(text, text, bigint[], uuid, text, uuid), '
                   'pgflow.release_claim(uuid, uuid) to %s', v_role);
  end loop;
end
$grants$;
-- [end migration-only]
