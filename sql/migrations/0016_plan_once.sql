-- pgflow SQL core, 0016: starts plan their statements once per session.
--
-- A profile of the hot entry points (bench/sql/profile.sh, perf; pg_stat_statements with
-- track_planning) found a start parsing and planning three statements on every call that need
-- it only once per session:
--   * _new_run_id was a SQL function with a SET clause, which PostgreSQL never inlines: its body
--     was parsed and planned per run. It is PL/pgSQL now (same value, same volatility).
--   * _enqueue_step_tasks called pgmq.send_batch(queue, msgs, delay), a SQL wrapper (volatile,
--     set-returning: never inlined, parsed and planned per call, in the bundled PGMQ and in the
--     extension alike). It calls the implementation the wrapper calls, send_batch(queue, msgs,
--     headers, delay timestamptz), with the same arguments the wrapper passed.
--   * The task insert in _enqueue_step_tasks was planned again on every call (PostgreSQL's plan
--     cache kept choosing a custom plan); the function now sets plan_cache_mode =
--     force_generic_plan, so it is planned once per session.
--   * For the same reason as _new_run_id, these are PL/pgSQL now, with the same results:
--     get_run_with_states (every Client::start_flow returns a run's state through it, and
--     Client::get_run reads it), start_run and start_run_by_slug (Client::start_run),
--     start_flow_by_alias, worker_heartbeat and calculate_retry_delay (a failure's backoff). No
--     hot path calls a SQL-language function now (tests/sql/hot_path/no_sql_functions).
--
-- Data: no row, queue or message changes. Locks: those of CREATE OR REPLACE FUNCTION. Applied by
-- the pgflow migration runner in one transaction. Immutable once released.

set local check_function_bodies = off;

-- ---- sql/schema/functions/runtime/_new_run_id.sql
-- A new run id: a time-ordered UUID (version 7: the first 48 bits are the Unix time in
-- milliseconds, the rest random, as RFC 9562 lays it out; since 0015, version 4 before). Run ids
-- lead the primary keys of runs, step_states and step_tasks: random ones sent every start's
-- inserts to a random leaf page of each, so with more history than fits in memory a start read
-- and dirtied pages all over the indexes (and wrote each one's full image to WAL once per
-- checkpoint); time-ordered ones append near the right edge. A run id still says nothing a
-- reader of the run cannot see (its started_at).
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so each
-- call parsed and planned its body again; PL/pgSQL keeps the expression's plan for the session.
-- Called by: start_flow_by_slug (runs without a caller's id), the default of runs.run_id.
create or replace function pgflow._new_run_id() returns uuid
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  -- gen_random_uuid() gives the random bits and the variant; the version nibble becomes 7
  -- (0100 -> 0111: bits 52 and 53 of the bytea, numbered from each byte's low bit).
  return encode(set_bit(set_bit(
           overlay(uuid_send(gen_random_uuid())
                   placing substring(int8send(floor(extract(epoch from clock_timestamp()) * 1000)::bigint) from 3)
                   from 1 for 6),
           52, 1), 53, 1), 'hex')::uuid;
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow_by_alias.sql
-- start_flow with the alias named as such: starts a run of the active version of `flow_alias`.
-- Called by: SQL users (Client::start_flow_by_alias goes through start_flow_with_states).
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_flow_by_alias(flow_alias text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  return query
  select * from pgflow.start_flow(start_flow_by_alias.flow_alias, start_flow_by_alias.input, start_flow_by_alias.run_id);
end;
$$;

-- ---- sql/schema/functions/runtime/start_run_by_slug.sql
-- The lean pinned start: start_flow_by_slug of the concrete flow `flow_slug`, returning only the
-- new run's id. SECURITY DEFINER, like start_run.
-- Locks: those of start_flow_by_slug.
-- Called by: Client::start_run_by_slug, start_run (after resolving the alias); other drivers.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_run_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return (select r.run_id
          from pgflow.start_flow_by_slug(start_run_by_slug.flow_slug, start_run_by_slug.input,
                                         start_run_by_slug.run_id) r);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run_by_slug(text, jsonb, uuid) from public;

-- ---- sql/schema/functions/runtime/start_run.sql
-- The lean start: start_flow of the active version of alias `flow_alias`, returning only the new
-- run's id (start_flow_with_states also reads the run back as JSON, which a producer that only
-- needs the id pays for on every call). SECURITY DEFINER like start_flow_with_states, and
-- granted to the same roles; it runs in the caller's transaction.
-- Locks: those of start_flow_by_slug (the new run's rows; queue rows last).
-- Called by: Client::start_run; other drivers.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.start_run(flow_alias text, input jsonb, run_id uuid default null)
returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return pgflow.start_run_by_slug(pgflow._resolve_flow_alias(start_run.flow_alias), start_run.input,
                                  start_run.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_run(text, jsonb, uuid) from public;

-- ---- sql/schema/functions/runtime/get_run_with_states.sql
-- {"run": <runs row>, "steps": [<step_states rows in step order>], "flow_alias": <the alias the
-- run's flow belongs to>}, or NULL for an unknown run. The run row carries the concrete slug.
-- SECURITY DEFINER (upstream's client calls it through RPC): only granted roles may call it.
-- Locks: none (reads).
-- Called by: start_flow_with_states, Client::get_run / wait_for_run; upstream clients.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.get_run_with_states(run_id uuid) returns jsonb
language plpgsql stable security definer
set search_path = pg_catalog, pg_temp
as $$
begin
  return (select jsonb_build_object(
    'run', to_jsonb(r),
    'steps', coalesce((
      select jsonb_agg(to_jsonb(ss) order by s.step_index)
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      where ss.run_id = r.run_id), '[]'::jsonb),
    'flow_alias', (select f.flow_alias from pgflow.flows f where f.flow_slug = r.flow_slug))
  from pgflow.runs r
  where r.run_id = get_run_with_states.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.get_run_with_states(uuid) from public;

-- ---- sql/schema/functions/runtime/_enqueue_step_tasks.sql
-- Gives a step that has just been started its tasks: publishes step:started, sends one message
-- per task to the step's queue (delayed by its start_delay) and inserts one queued task row per
-- message that snapshots that queue; announces the work when it is visible at once. No queue
-- DDL happens here.
-- Locks: the caller holds the run and the step state; task rows -> queue rows.
-- Plans: the insert is planned once per session (plan_cache_mode; since 0016): left to choose,
-- PostgreSQL planned it again on every call, as a custom plan for the task count always looked
-- cheaper than the generic one. It calls send_batch's implementation (the overload with headers
-- and a time), not a SQL wrapper, which would be parsed and planned again on every call.
-- Called by: start_ready_steps, start_flow_by_slug (root steps it creates started).
create or replace function pgflow._enqueue_step_tasks(p_run pgflow.runs, p_state pgflow.step_states,
                                                      p_queue_name text, p_start_delay int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
begin
  perform pgflow._emit_step_event(p_state);

  -- send_batch returns the ids in message order, so ordinality pairs id and task index.
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name)
  select p_run.flow_slug, p_run.run_id, p_state.step_slug, (m.n - 1)::int, m.msg_id, p_queue_name
  from pgmq.send_batch(
         p_queue_name,
         array(select jsonb_build_object('flow_slug', p_run.flow_slug, 'run_id', p_run.run_id,
                                         'step_slug', p_state.step_slug, 'task_index', i)
               from generate_series(0, p_state.initial_tasks - 1) i order by i),
         null::jsonb[], clock_timestamp() + make_interval(secs => p_start_delay)) with ordinality as m(msg_id, n);
  if p_start_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/calculate_retry_delay.sql
-- Upstream's retry backoff: floor(base_delay * 2^attempts_count) seconds.
-- PL/pgSQL since 0016: a SQL function with a SET clause is never inlined, so every failure
-- parsed and planned its body again (sql/schema/README.md, Plans).
-- Called by: _fail_task.
create or replace function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language plpgsql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
begin
  return floor(base_delay * power(2, attempts_count))::int;
end;
$$;

-- ---- sql/schema/functions/workers/worker_heartbeat.sql
-- Records a heartbeat; returns true when an operator deprecated the worker (it should stop
-- polling and drain).
-- Called by: the worker's heartbeat thread.
-- PL/pgSQL, not SQL, since 0016: a SQL function with a SET clause is never inlined, so every
-- call parsed and planned its body again (sql/schema/README.md, Plans).
create or replace function pgflow.worker_heartbeat(worker_id uuid) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_deprecated boolean;
begin
  update pgflow.workers w set last_heartbeat_at = clock_timestamp()
  where w.worker_id = worker_heartbeat.worker_id
  returning w.deprecated_at is not null into v_deprecated;
  return v_deprecated;
end;
$$;

-- SECURITY DEFINER (since schema 0012): the worker role writes tasks, runs and worker rows only
-- through the worker API, which derives every queue it touches (docs/security.md); nobody calls
-- it unless granted (sql/contrib/grants.sql grants it to pgflow_worker).
revoke execute on function pgflow.worker_heartbeat(uuid) from public;
