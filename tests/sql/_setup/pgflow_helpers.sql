-- Test helpers for the pgflow SQL core (schema pgflow_tests). Loaded into the test template
-- after helpers.sql; never part of an installation.

create schema if not exists pgflow_tests;

-- Registers (or re-uses) a worker row for a queue; claims need one (step_tasks.last_worker_id
-- FK, and claim_tasks checks the subscription). Re-using a worker id for another queue moves
-- the test worker's subscription to that queue (one default worker serves every flow).
create or replace function pgflow_tests.ensure_worker(
  queue_name text,
  worker_uuid uuid default '11111111-1111-1111-1111-111111111111',
  function_name text default 'test_worker')
returns pgflow.workers
language sql
as $$
  insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
  values (worker_uuid, lower(queue_name), function_name, pgflow.worker_protocol())
  on conflict (worker_id) do update set last_heartbeat_at = now(), queue_name = excluded.queue_name
  returning *
$$;

-- Phase 1 (pgmq.read, no polling) and phase 2 (start_tasks) of a claim, as a worker does it.
create or replace function pgflow_tests.read_and_start(
  flow_slug text,
  vt integer default 1,
  qty integer default 1,
  worker_uuid uuid default '11111111-1111-1111-1111-111111111111',
  function_name text default 'test_worker')
returns setof pgflow.step_task_record
language plpgsql
as $$
begin
  perform pgflow_tests.ensure_worker(flow_slug, worker_uuid, function_name);
  return query
  select * from pgflow.start_tasks(
    flow_slug,
    array(select m.msg_id from pgmq.read(flow_slug, vt, qty) m),
    worker_uuid);
end;
$$;

-- Claims up to qty tasks and completes each with output {"input": <task input>}.
create or replace function pgflow_tests.poll_and_complete(
  flow_slug text, vt integer default 1, qty integer default 1)
returns setof pgflow.step_tasks
language plpgsql
as $$
declare
  t pgflow.step_task_record;
begin
  for t in select * from pgflow_tests.read_and_start(flow_slug, vt, qty) loop
    return query select * from pgflow.complete_task(t.run_id, t.step_slug, t.task_index,
                                                    jsonb_build_object('input', t.input));
  end loop;
end;
$$;

-- Claims up to qty tasks and fails each with '<step_slug> FAILED'.
create or replace function pgflow_tests.poll_and_fail(
  flow_slug text, vt integer default 1, qty integer default 1)
returns setof pgflow.step_tasks
language plpgsql
as $$
declare
  t pgflow.step_task_record;
begin
  for t in select * from pgflow_tests.read_and_start(flow_slug, vt, qty) loop
    return query select * from pgflow.fail_task(t.run_id, t.step_slug, t.task_index,
                                                t.step_slug || ' FAILED');
  end loop;
end;
$$;

-- Standard fixture flows, all with timeout 1:
--   sequential:            first -> second -> last
--   sequential_other:      the same, as flow "other"
--   two_roots:             root_a, root_b -> last
--   two_roots_left_right:  connected_root -> left, right; disconnected_root
create or replace function pgflow_tests.setup_flow(flow_slug text)
returns void
language plpgsql
as $$
begin
  if flow_slug in ('sequential', 'sequential_other') then
    perform pgflow.create_flow(case flow_slug when 'sequential' then 'sequential' else 'other' end,
                               timeout => 1);
    perform pgflow.add_step(case flow_slug when 'sequential' then 'sequential' else 'other' end, 'first');
    perform pgflow.add_step(case flow_slug when 'sequential' then 'sequential' else 'other' end, 'second', array['first']);
    perform pgflow.add_step(case flow_slug when 'sequential' then 'sequential' else 'other' end, 'last', array['second']);
  elsif flow_slug = 'two_roots' then
    perform pgflow.create_flow('two_roots', timeout => 1);
    perform pgflow.add_step('two_roots', 'root_a');
    perform pgflow.add_step('two_roots', 'root_b');
    perform pgflow.add_step('two_roots', 'last', array['root_a', 'root_b']);
  elsif flow_slug = 'two_roots_left_right' then
    perform pgflow.create_flow('two_roots_left_right', timeout => 1);
    perform pgflow.add_step('two_roots_left_right', 'connected_root');
    perform pgflow.add_step('two_roots_left_right', 'left', array['connected_root']);
    perform pgflow.add_step('two_roots_left_right', 'right', array['connected_root']);
    perform pgflow.add_step('two_roots_left_right', 'disconnected_root');
  else
    raise exception 'unknown fixture flow %', flow_slug;
  end if;
end;
$$;

-- One step of a flow shape, with upstream's defaults.
create or replace function pgflow_tests.step_shape(
  slug text,
  dependencies text[] default '{}',
  step_type text default 'single',
  when_unmet text default 'skip',
  when_exhausted text default 'fail',
  required jsonb default null,
  forbidden jsonb default null,
  options jsonb default null,
  wait jsonb default null)
returns jsonb
language sql immutable
as $$
  select jsonb_build_object(
    'slug', slug,
    'stepType', step_type,
    'dependencies', to_jsonb(array(select d from unnest(dependencies) d order by d)),
    'whenUnmet', when_unmet,
    'whenExhausted', when_exhausted,
    'requiredInputPattern', case when required is null then '{"defined": false}'::jsonb
                                 else jsonb_build_object('defined', true, 'value', required) end,
    'forbiddenInputPattern', case when forbidden is null then '{"defined": false}'::jsonb
                                  else jsonb_build_object('defined', true, 'value', forbidden) end)
  || case when options is null then '{}'::jsonb else jsonb_build_object('options', options) end
  || case when wait is null then '{}'::jsonb else jsonb_build_object('wait', wait) end
$$;

-- Makes every message of a queue visible now (skips visibility timeouts and backoffs).
create or replace function pgflow_tests.reset_message_visibility(queue_name text)
returns void
language plpgsql
as $$
begin
  execute format('update pgmq.%I set vt = clock_timestamp()', pgmq.format_table_name(queue_name, 'q'));
end;
$$;

-- The queue's messages for a step with their visibility delay in whole seconds from now.
create or replace function pgflow_tests.message_timing(step_slug text, queue_name text)
returns table (msg_id bigint, read_ct int, vt_seconds int, message jsonb)
language plpgsql
as $$
begin
  return query execute format(
    'select msg_id, read_ct, round(extract(epoch from vt - clock_timestamp()))::int, message
     from pgmq.%I where message->>''step_slug'' = $1 order by msg_id',
    pgmq.format_table_name(queue_name, 'q'))
  using step_slug;
end;
$$;

-- Whether every message of `step_slug` in `queue_name` (there is at least one) becomes visible
-- `delay_s` seconds after an instant between t0 and t1: clock_timestamp() values a test takes
-- right before and right after the call that set the visibility. An exact check that does not
-- depend on how fast the test runs (no tolerance window).
create or replace function pgflow_tests.visible_after(step_slug text, queue_name text, delay_s numeric,
                                                      t0 timestamptz, t1 timestamptz)
returns boolean
language plpgsql
as $$
declare
  v_ok boolean;
begin
  execute format(
    'select count(*) > 0 and bool_and(vt between $2 + $4 * interval ''1 second'' and $3 + $4 * interval ''1 second'')
     from pgmq.%I where message->>''step_slug'' = $1', pgmq.format_table_name(queue_name, 'q'))
  into v_ok using step_slug, t0, t1, delay_s;
  return v_ok;
end;
$$;

-- Installs a stand-in for Supabase's realtime.send that records every call.
create or replace function pgflow_tests.install_realtime_stub()
returns void
language plpgsql
as $$
begin
  create schema if not exists realtime;
  create table if not exists realtime.messages (
    id bigint generated always as identity primary key,
    topic text not null,
    extension text not null default 'broadcast',
    payload jsonb,
    event text,
    private boolean default false,
    inserted_at timestamp default clock_timestamp());
  create or replace function realtime.send(payload jsonb, event text, topic text,
                                           private boolean default true)
  returns void language sql as
  'insert into realtime.messages (topic, payload, event, private) values (topic, payload, event, private)';
end;
$$;

-- Realtime broadcasts recorded by the stub for one run, in emission order.
create or replace function pgflow_tests.realtime_events(run_id uuid)
returns table (event text, payload jsonb, topic text)
language plpgsql  -- plpgsql: realtime.messages exists only after install_realtime_stub()
as $$
begin
  return query select m.event, m.payload, m.topic from realtime.messages m
               where m.topic = 'pgflow:run:' || run_id order by m.id;
end;
$$;

-- Counts the messages (active, archived) of a queue.
create or replace function pgflow_tests.queue_counts(queue_name text, out active bigint, out archived bigint)
language plpgsql
as $$
begin
  execute format('select count(*) from pgmq.%I', pgmq.format_table_name(queue_name, 'q')) into active;
  execute format('select count(*) from pgmq.%I', pgmq.format_table_name(queue_name, 'a')) into archived;
end;
$$;

-- ---- Runtime progression helpers (claim / complete / fail one specific task) ----

-- Claims one specific task for the test worker: claim_tasks with that task's queue and message
-- id (and its step, in a flow with one queue per step), as a worker does after reading the
-- message (visibility is not checked, so a task whose message is still hidden by a backoff can
-- be claimed too). The test worker is subscribed to the task's queue.
create or replace function pgflow_tests.start_task(
  run_id uuid, step_slug text, task_index int default 0,
  worker_uuid uuid default '11111111-1111-1111-1111-111111111111')
returns setof pgflow.step_task_record
language plpgsql
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_queue text;
  v_mode text;
  v_msg bigint;
begin
  select t.flow_slug, t.queue_name, f.queue_mode, t.message_id into v_flow, v_queue, v_mode, v_msg
  from pgflow.step_tasks t join pgflow.flows f on f.flow_slug = t.flow_slug
  where t.run_id = start_task.run_id and t.step_slug = start_task.step_slug
    and t.task_index = start_task.task_index;
  if not found then
    raise exception 'pgflow_tests.start_task: no task %/%/%', run_id, step_slug, task_index;
  end if;
  perform pgflow_tests.ensure_worker(v_queue, worker_uuid);
  return query
  select c.flow_slug, c.run_id, c.step_slug, c.input, c.msg_id, c.task_index, c.flow_input
  from pgflow.claim_tasks(v_queue, v_flow, array[v_msg], worker_uuid,
                          case when v_mode = 'step' then start_task.step_slug end) c
  where c.outcome = 'claimed';
end;
$$;

-- Compiles a flow with one queue per step (queue mode step) from its shape.
create or replace function pgflow_tests.compile_step_flow(flow_slug text, steps jsonb)
returns jsonb
language sql
as $$
  select pgflow.ensure_flow_compiled(flow_slug, jsonb_build_object('steps', steps),
                                     pgflow.worker_protocol(), 'step')
$$;

-- Claims one specific task and completes it with `output`.
create or replace function pgflow_tests.complete_step_task(
  run_id uuid, step_slug text, task_index int default 0, output jsonb default '{}')
returns setof pgflow.step_tasks
language plpgsql
as $$
begin
  perform pgflow_tests.start_task(run_id, step_slug, task_index);
  return query select * from pgflow.complete_task(run_id, step_slug, task_index, output);
end;
$$;

-- Claims one specific task and fails it with `error_message`.
create or replace function pgflow_tests.fail_step_task(
  run_id uuid, step_slug text, task_index int default 0, error_message text default 'boom')
returns setof pgflow.step_tasks
language plpgsql
as $$
begin
  perform pgflow_tests.start_task(run_id, step_slug, task_index);
  return query select * from pgflow.fail_task(run_id, step_slug, task_index, error_message);
end;
$$;

-- Message ids of a queue: active (in the queue) or archived.
create or replace function pgflow_tests.queue_msg_ids(queue_name text, archived boolean default false)
returns setof bigint
language plpgsql
as $$
begin
  return query execute format('select msg_id from pgmq.%I order by msg_id',
                              pgmq.format_table_name(queue_name, case when archived then 'a' else 'q' end));
end;
$$;

-- ---- Flow aliases ----

-- A worker's startup deployment of concrete flow `flow_slug` under alias `flow_alias` (NULL:
-- its own slug), with one step `greet` unless `steps` says otherwise: ensure_flow_compiled's
-- result.
create or replace function pgflow_tests.deploy(flow_slug text, flow_alias text,
                                               steps jsonb default null, queue_mode text default 'flow')
returns jsonb
language sql
as $$
  select pgflow.ensure_flow_compiled(
    flow_slug, jsonb_build_object('steps', coalesce(steps, jsonb_build_array(pgflow_tests.step_shape('greet')))),
    pgflow.worker_protocol(), queue_mode, null, flow_alias)
$$;

-- The active version of an alias (NULL: none).
create or replace function pgflow_tests.active_version(flow_alias text)
returns text
language sql stable
as $$
  select a.flow_slug from pgflow.flow_aliases a where a.flow_alias = active_version.flow_alias
$$;

-- Drops a PGMQ table, to simulate a damaged queue, in either PGMQ mode: with the pgmq extension
-- a queue's tables and its message id sequence are members of the extension, which refuses to
-- drop a member, so they leave the extension first.
create function pgflow_tests.drop_queue_table(p_table regclass) returns void
language plpgsql as $$
declare
  v_member record;
begin
  for v_member in
    select c.oid::regclass as rel, case c.relkind when 'S' then 'sequence' else 'table' end as kind
    from pg_class c
    join pg_depend e on e.classid = 'pg_class'::regclass and e.objid = c.oid and e.deptype = 'e'
    where c.oid = p_table
       or (c.relkind = 'S' and exists (select 1 from pg_depend d
                                       where d.classid = 'pg_class'::regclass and d.objid = c.oid
                                         and d.refobjid = p_table and d.deptype in ('a', 'i')))
  loop
    execute format('alter extension pgmq drop %s %s', v_member.kind, v_member.rel);
  end loop;
  execute format('drop table %s', p_table);
end;
$$;

-- A flow with a wait step between two steps with handlers: draft -> approve (the wait: `wait`,
-- of `step_type`, `when_exhausted`) -> publish. A map wait takes its elements from draft's output.
create or replace function pgflow_tests.setup_wait_flow(
  flow_slug text, wait jsonb default '{"kind": "signal"}', step_type text default 'single',
  when_exhausted text default 'fail')
returns void
language plpgsql
as $$
begin
  perform pgflow.create_flow(flow_slug, timeout => 1);
  perform pgflow.add_step(flow_slug, 'draft');
  perform pgflow.add_wait_step(flow_slug, 'approve', wait, array['draft'], step_type,
                               when_exhausted => when_exhausted);
  perform pgflow.add_step(flow_slug, 'publish', array['approve']);
end;
$$;

-- The status of each task of a run, as 'step/index: status', in step and index order.
create or replace function pgflow_tests.task_statuses(run_id uuid)
returns text[]
language sql stable
as $$
  select array_agg(format('%s/%s: %s', t.step_slug, t.task_index, t.status)
                   order by t.step_slug, t.task_index)
  from pgflow.step_tasks t where t.run_id = task_statuses.run_id
$$;
