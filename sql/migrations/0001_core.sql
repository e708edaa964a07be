-- pgflow SQL core, 0001: upstream pgflow 0.16.0 semantics.
--
-- One PGMQ queue per flow, named by the flow slug; the 0.15.1 fixes (effective step timeout in
-- stall recovery, terminal task statuses `skipped` and `cancelled` that late callbacks cannot
-- undo, mandatory claim visibility); 0.16.0's startup-only compilation through
-- ensure_flow_compiled(flow_slug, shape). Where upstream has a known defect, this file does
-- what upstream intended instead; docs/sql-core.md lists each such decision.
--
-- Applied by the pgflow migration runner in one transaction. Immutable once released.
--
-- LOCK ORDER. Every function takes row locks in this order and never the other way round, so
-- concurrent callers queue instead of deadlocking:
--   1. flow definition      advisory xact lock (1, hashtext(flow_slug))  (definition calls only)
--   2. run                  pgflow.runs row: FOR UPDATE (state changes), FOR SHARE (claims)
--   3. step states          pgflow.step_states rows of that run
--   4. tasks                pgflow.step_tasks rows of that run
--   5. queue messages       PGMQ rows (send, archive, set_vt)
-- A runtime function touches one run at a time, except claims (runs locked FOR SHARE in run_id
-- order) and stall recovery (SKIP LOCKED, never waits while holding a task).
--
-- QUEUE ACCESS. Runtime functions reach PGMQ only through _archive_task_message,
-- _set_task_message_vt, _terminate_tasks and start_ready_steps, so only these four decide which
-- queue a task lives in (0002 replaces them to use the task's own queue_name snapshot).
--
-- EVENTS. Every state change is published with pg_notify on channel `pgflow_events` as a small
-- JSON object {event, run_id, flow_slug, step_slug?, status} (never inputs, outputs or errors).
-- When realtime.send(jsonb, text, text, boolean) exists (Supabase), the upstream broadcast is
-- sent too: topic pgflow:run:<run_id>, upstream event names and payloads.

create schema if not exists pgflow;
revoke all on schema pgflow from public;

-- ===========================================================================================
-- Definitions
-- ===========================================================================================

create function pgflow.is_valid_slug(slug text) returns boolean
language sql immutable parallel safe
set search_path = ''
as $$
  select slug is not null
     and slug <> ''
     and length(slug) <= 128
     and slug ~ '^[a-zA-Z_][a-zA-Z0-9_]*$'
     and slug <> 'run'
$$;

-- True when this database is a development database: the setting pgflow.local is on (the
-- embedded cluster sets it in postgresql.conf; `alter database … set pgflow.local = on` works
-- too). Nothing else decides "local".
create function pgflow.is_local() returns boolean
language sql stable parallel safe
set search_path = ''
as $$
  select lower(coalesce(current_setting('pgflow.local', true), '')) in ('on', 'true', '1', 'yes')
$$;

create function pgflow.calculate_retry_delay(base_delay numeric, attempts_count int) returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select floor(base_delay * power(2, attempts_count))::int
$$;

create table pgflow.flows (
  flow_slug        text primary key,
  opt_max_attempts int not null default 3,
  opt_base_delay   int not null default 1,
  opt_timeout      int not null default 60,
  created_at       timestamptz not null default now(),
  constraint slug_is_valid check (pgflow.is_valid_slug(flow_slug)),
  constraint opt_max_attempts_is_nonnegative check (opt_max_attempts >= 0),
  constraint opt_base_delay_is_nonnegative check (opt_base_delay >= 0),
  constraint opt_timeout_is_positive check (opt_timeout > 0)
);

create table pgflow.steps (
  flow_slug               text not null references pgflow.flows (flow_slug),
  step_slug               text not null,
  step_type               text not null default 'single',
  step_index              int not null default 0,
  deps_count              int not null default 0 check (deps_count >= 0),
  opt_max_attempts        int,
  opt_base_delay          int,
  opt_timeout             int,
  opt_start_delay         int,
  required_input_pattern  jsonb,
  forbidden_input_pattern jsonb,
  when_unmet              text not null default 'skip',
  when_exhausted          text not null default 'fail',
  created_at              timestamptz not null default now(),
  primary key (flow_slug, step_slug),
  unique (flow_slug, step_index),
  check (pgflow.is_valid_slug(step_slug)),
  check (step_type in ('single', 'map')),
  constraint opt_max_attempts_is_nonnegative check (opt_max_attempts is null or opt_max_attempts >= 0),
  constraint opt_base_delay_is_nonnegative check (opt_base_delay is null or opt_base_delay >= 0),
  constraint opt_timeout_is_positive check (opt_timeout is null or opt_timeout > 0),
  constraint opt_start_delay_is_nonnegative check (opt_start_delay is null or opt_start_delay >= 0),
  constraint required_input_pattern_is_object check (
    required_input_pattern is null or jsonb_typeof(required_input_pattern) = 'object'),
  constraint forbidden_input_pattern_is_object check (
    forbidden_input_pattern is null or jsonb_typeof(forbidden_input_pattern) = 'object'),
  constraint when_unmet_is_valid check (when_unmet in ('fail', 'skip', 'skip-cascade')),
  constraint when_exhausted_is_valid check (when_exhausted in ('fail', 'skip', 'skip-cascade'))
);

create table pgflow.deps (
  flow_slug  text not null references pgflow.flows (flow_slug),
  dep_slug   text not null,
  step_slug  text not null,
  created_at timestamptz not null default now(),
  primary key (flow_slug, dep_slug, step_slug),
  foreign key (flow_slug, dep_slug) references pgflow.steps (flow_slug, step_slug),
  foreign key (flow_slug, step_slug) references pgflow.steps (flow_slug, step_slug),
  check (dep_slug <> step_slug)
);
create index idx_deps_by_flow_step on pgflow.deps (flow_slug, step_slug);
create index idx_deps_by_flow_dep on pgflow.deps (flow_slug, dep_slug);

-- ===========================================================================================
-- Runtime state
-- ===========================================================================================

create table pgflow.runs (
  run_id          uuid primary key not null default gen_random_uuid(),
  flow_slug       text not null references pgflow.flows (flow_slug),
  status          text not null default 'started',
  input           jsonb not null,
  output          jsonb,
  remaining_steps int not null default 0 check (remaining_steps >= 0),
  started_at      timestamptz not null default now(),
  completed_at    timestamptz,
  failed_at       timestamptz,
  constraint status_is_valid check (status in ('started', 'failed', 'completed')),
  constraint completed_at_or_failed_at check (not (completed_at is not null and failed_at is not null)),
  constraint completed_at_is_after_started_at check (completed_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (failed_at is null or failed_at >= started_at)
);
create index idx_runs_flow_slug on pgflow.runs (flow_slug);
create index idx_runs_status on pgflow.runs (status);

create table pgflow.step_states (
  flow_slug       text not null references pgflow.flows (flow_slug),
  run_id          uuid not null references pgflow.runs (run_id),
  step_slug       text not null,
  status          text not null default 'created',
  remaining_tasks int,
  initial_tasks   int check (initial_tasks >= 0),
  remaining_deps  int not null default 0 check (remaining_deps >= 0),
  output          jsonb,
  error_message   text,
  skip_reason     text,
  created_at      timestamptz not null default now(),
  started_at      timestamptz,
  completed_at    timestamptz,
  failed_at       timestamptz,
  skipped_at      timestamptz,
  primary key (run_id, step_slug),
  foreign key (flow_slug, step_slug) references pgflow.steps (flow_slug, step_slug),
  constraint status_is_valid check (status in ('created', 'started', 'completed', 'failed', 'skipped')),
  constraint status_and_remaining_tasks_match check (status <> 'completed' or remaining_tasks = 0),
  constraint remaining_tasks_state_consistency check (
    remaining_tasks is null or status not in ('created', 'skipped')),
  constraint initial_tasks_known_when_started check (status <> 'started' or initial_tasks is not null),
  constraint output_only_for_completed_or_null check (output is null or status = 'completed'),
  constraint skip_reason_matches_status check (
    (status = 'skipped' and skip_reason is not null) or (status <> 'skipped' and skip_reason is null)),
  constraint completed_at_or_failed_at_or_skipped_at check (
    (case when completed_at is not null then 1 else 0 end
     + case when failed_at is not null then 1 else 0 end
     + case when skipped_at is not null then 1 else 0 end) <= 1),
  constraint started_at_is_after_created_at check (started_at is null or started_at >= created_at),
  constraint completed_at_is_after_started_at check (completed_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (failed_at is null or failed_at >= started_at),
  constraint skipped_at_is_after_created_at check (skipped_at is null or skipped_at >= created_at)
);
create index idx_step_states_ready on pgflow.step_states (run_id, status, remaining_deps)
  where status = 'created' and remaining_deps = 0;
create index idx_step_states_failed on pgflow.step_states (run_id, step_slug) where status = 'failed';
create index idx_step_states_skipped on pgflow.step_states (run_id, step_slug) where status = 'skipped';
create index idx_step_states_flow_slug on pgflow.step_states (flow_slug);
create index idx_step_states_run_id on pgflow.step_states (run_id);

create table pgflow.workers (
  worker_id         uuid primary key,
  queue_name        text not null,
  function_name     text not null,
  started_at        timestamptz not null default now(),
  deprecated_at     timestamptz,
  stopped_at        timestamptz,
  last_heartbeat_at timestamptz not null default now()
);
create index idx_workers_queue_name on pgflow.workers (queue_name);
create index idx_workers_heartbeat on pgflow.workers (last_heartbeat_at);

create table pgflow.worker_functions (
  function_name   text primary key,
  enabled         boolean not null default true,
  debounce        interval not null default '6 seconds' check (debounce >= '1 second'),
  last_invoked_at timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now()
);

-- Task statuses: queued -> started -> completed | failed, back to queued on retry or stall
-- recovery; skipped (its step was skipped) and cancelled (its run failed) are terminal too.
create table pgflow.step_tasks (
  flow_slug              text not null references pgflow.flows (flow_slug),
  run_id                 uuid not null references pgflow.runs (run_id),
  step_slug              text not null,
  message_id             bigint,
  task_index             int not null default 0,
  status                 text not null default 'queued',
  attempts_count         int not null default 0,
  error_message          text,
  output                 jsonb,
  queued_at              timestamptz not null default now(),
  started_at             timestamptz,
  completed_at           timestamptz,
  failed_at              timestamptz,
  last_worker_id         uuid references pgflow.workers (worker_id) on delete set null,
  requeued_count         int not null default 0,
  last_requeued_at       timestamptz,
  permanently_stalled_at timestamptz,
  constraint step_tasks_pkey primary key (run_id, step_slug, task_index),
  foreign key (run_id, step_slug) references pgflow.step_states (run_id, step_slug),
  constraint valid_status check (
    status in ('queued', 'started', 'completed', 'failed', 'skipped', 'cancelled')),
  constraint output_valid_only_for_completed check (
    output is null or status in ('completed', 'failed')),
  constraint attempts_count_nonnegative check (attempts_count >= 0),
  constraint completed_at_or_failed_at check (not (completed_at is not null and failed_at is not null)),
  constraint completed_at_is_after_queued_at check (completed_at is null or completed_at >= queued_at),
  constraint failed_at_is_after_queued_at check (failed_at is null or failed_at >= queued_at),
  constraint started_at_is_after_queued_at check (started_at is null or started_at >= queued_at),
  constraint completed_at_is_after_started_at check (
    completed_at is null or started_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (
    failed_at is null or started_at is null or failed_at >= started_at)
);
create index idx_step_tasks_message_id on pgflow.step_tasks (message_id);
create index idx_step_tasks_queued on pgflow.step_tasks (run_id, step_slug) where status = 'queued';
create index idx_step_tasks_completed on pgflow.step_tasks (run_id, step_slug) where status = 'completed';
create index idx_step_tasks_failed on pgflow.step_tasks (run_id, step_slug) where status = 'failed';
create index idx_step_tasks_flow_run_step on pgflow.step_tasks (flow_slug, run_id, step_slug);
create index idx_step_tasks_started on pgflow.step_tasks (started_at) where status = 'started';
create index idx_step_tasks_queued_msg on pgflow.step_tasks (message_id) where status = 'queued';
create index idx_step_tasks_last_worker on pgflow.step_tasks (last_worker_id) where status = 'started';

create type pgflow.step_task_record as (
  flow_slug  text,
  run_id     uuid,
  step_slug  text,
  input      jsonb,
  msg_id     bigint,
  task_index int,
  flow_input jsonb
);

-- ===========================================================================================
-- Events
-- ===========================================================================================

-- Publishes one state change. `payload` is upstream's broadcast payload (it carries
-- event_type, run_id, status and, for step events, step_slug); `event` is upstream's event
-- name (run:<kind> or step:<slug>:<kind>). The pg_notify copy keeps only ids, slugs and
-- status, so it stays far below NOTIFY's 8000-byte limit and never carries data.
create function pgflow._emit(payload jsonb, event text, flow_slug text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  perform pg_notify('pgflow_events', jsonb_strip_nulls(jsonb_build_object(
    'event', payload->>'event_type',
    'run_id', payload->>'run_id',
    'flow_slug', flow_slug,
    'step_slug', payload->>'step_slug',
    'status', payload->>'status'))::text);
  -- Looked up in the catalog: to_regprocedure() would raise for a caller without USAGE on
  -- schema realtime instead of answering.
  if exists (select 1 from pg_catalog.pg_proc p
             join pg_catalog.pg_namespace n on n.oid = p.pronamespace
             where n.nspname = 'realtime' and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::pg_catalog.oidvector) then
    perform realtime.send(payload, event, 'pgflow:run:' || (payload->>'run_id'), false);
  end if;
end;
$$;

-- ===========================================================================================
-- Definition API
-- ===========================================================================================

-- Serialises definition changes of one flow (lock order position 1). Reentrant within a
-- transaction, so ensure_flow_compiled -> create_flow -> add_step takes it once.
create function pgflow._lock_flow_definition(flow_slug text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_advisory_xact_lock(1, hashtext(flow_slug))
$$;

create function pgflow.create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null
) returns pgflow.flows
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
begin
  perform pgflow._lock_flow_definition(create_flow.flow_slug);
  insert into pgflow.flows (flow_slug, opt_max_attempts, opt_base_delay, opt_timeout)
  values (create_flow.flow_slug, coalesce(max_attempts, 3), coalesce(base_delay, 5),
          coalesce(timeout, 60))
  on conflict on constraint flows_pkey do update set flow_slug = excluded.flow_slug  -- lock, keep options
  returning * into v_flow;

  if not exists (select 1 from pgmq.list_queues() q where q.queue_name = create_flow.flow_slug) then
    perform pgmq.create(create_flow.flow_slug);
  end if;
  return v_flow;
end;
$$;

-- Adds a step. Calling it again for an existing step is idempotent when the structure (type,
-- dependencies, patterns, modes) is the same, and an error otherwise: unlike upstream it never
-- adds edges to an existing step, so re-calls cannot create cycles or stale deps_count. Runtime
-- options of an existing step are left unchanged (tune them with UPDATE).
create function pgflow.add_step(
  flow_slug text,
  step_slug text,
  deps_slugs text[] default '{}',
  max_attempts int default null,
  base_delay int default null,
  timeout int default null,
  start_delay int default null,
  step_type text default 'single',
  required_input_pattern jsonb default null,
  forbidden_input_pattern jsonb default null,
  when_unmet text default 'skip',
  when_exhausted text default 'fail'
) returns pgflow.steps
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_type text := coalesce(add_step.step_type, 'single');
  v_deps text[] := array(select distinct d from unnest(coalesce(deps_slugs, '{}')) d order by d);
  v_existing pgflow.steps;
  v_existing_deps text[];
  v_step pgflow.steps;
begin
  if v_type = 'map' and cardinality(v_deps) > 1 then
    raise exception 'Map step "%" can have at most one dependency, but % were provided: %',
      add_step.step_slug, cardinality(v_deps), array_to_string(v_deps, ', ');
  end if;

  perform pgflow._lock_flow_definition(add_step.flow_slug);

  select * into v_existing from pgflow.steps s
  where s.flow_slug = add_step.flow_slug and s.step_slug = add_step.step_slug;
  if found then
    v_existing_deps := array(
      select d.dep_slug from pgflow.deps d
      where d.flow_slug = add_step.flow_slug and d.step_slug = add_step.step_slug
      order by d.dep_slug);
    if v_existing.step_type is distinct from v_type
       or v_existing_deps is distinct from v_deps
       or v_existing.required_input_pattern is distinct from add_step.required_input_pattern
       or v_existing.forbidden_input_pattern is distinct from add_step.forbidden_input_pattern
       or v_existing.when_unmet is distinct from add_step.when_unmet
       or v_existing.when_exhausted is distinct from add_step.when_exhausted then
      raise exception 'Step "%" already exists in flow "%" with a different definition; '
        'flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
        add_step.step_slug, add_step.flow_slug
        using errcode = 'unique_violation';
    end if;
    return v_existing;
  end if;

  insert into pgflow.steps (
    flow_slug, step_slug, step_type, step_index, deps_count,
    opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay,
    required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted)
  values (
    add_step.flow_slug, add_step.step_slug, v_type,
    (select coalesce(max(s.step_index) + 1, 0) from pgflow.steps s
     where s.flow_slug = add_step.flow_slug),
    cardinality(v_deps),
    max_attempts, base_delay, timeout, start_delay,
    add_step.required_input_pattern, add_step.forbidden_input_pattern,
    add_step.when_unmet, add_step.when_exhausted)
  returning * into v_step;

  insert into pgflow.deps (flow_slug, dep_slug, step_slug)
  select add_step.flow_slug, d, add_step.step_slug from unnest(v_deps) d;

  return v_step;
end;
$$;

-- The flow shape as stored (the DB never reports options: they are runtime-tunable).
-- Dependencies sort by byte order (collation "C"), as upstream's JavaScript sort does.
create function pgflow._get_flow_shape(p_flow_slug text) returns jsonb
language sql stable
set search_path = ''
as $$
  select jsonb_build_object('steps', coalesce(jsonb_agg(
    jsonb_build_object(
      'slug', s.step_slug,
      'stepType', s.step_type,
      'dependencies', coalesce((
        select jsonb_agg(d.dep_slug order by d.dep_slug collate "C") from pgflow.deps d
        where d.flow_slug = s.flow_slug and d.step_slug = s.step_slug), '[]'::jsonb),
      'whenUnmet', s.when_unmet,
      'whenExhausted', s.when_exhausted,
      'requiredInputPattern', case when s.required_input_pattern is null
        then '{"defined": false}'::jsonb
        else jsonb_build_object('defined', true, 'value', s.required_input_pattern) end,
      'forbiddenInputPattern', case when s.forbidden_input_pattern is null
        then '{"defined": false}'::jsonb
        else jsonb_build_object('defined', true, 'value', s.forbidden_input_pattern) end)
    order by s.step_index), '[]'::jsonb))
  from pgflow.steps s
  where s.flow_slug = p_flow_slug
$$;

-- A JSON array of strings as a sorted text[]; NULL when the value is missing or not an array.
create function pgflow._sorted_text_array(p_value jsonb) returns text[]
language sql immutable
set search_path = ''
as $$
  select case when jsonb_typeof(p_value) = 'array'
    then array(select e from jsonb_array_elements_text(p_value) e order by e collate "C")
  end
$$;

-- Human-readable differences between two shapes, compared index by index. Unlike upstream, a
-- key missing on one side is a difference (shown as <missing>), never silently equal.
create function pgflow._compare_flow_shapes(p_local jsonb, p_db jsonb) returns text[]
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_local_steps jsonb := coalesce(p_local->'steps', '[]'::jsonb);
  v_db_steps jsonb := coalesce(p_db->'steps', '[]'::jsonb);
  v_local_count int := jsonb_array_length(v_local_steps);
  v_db_count int := jsonb_array_length(v_db_steps);
  v_diffs text[] := '{}';
  v_l jsonb;
  v_d jsonb;
  v_key text;
  v_label text;
  i int;
begin
  if v_local_count <> v_db_count then
    v_diffs := v_diffs || format('Step count differs: %s vs %s', v_local_count, v_db_count);
  end if;
  for i in 0 .. greatest(v_local_count, v_db_count) - 1 loop
    v_l := v_local_steps->i;
    v_d := v_db_steps->i;
    if v_l is null then
      v_diffs := v_diffs || format('Step at index %s: missing in first shape (second has ''%s'')',
                                   i, v_d->>'slug');
      continue;
    end if;
    if v_d is null then
      v_diffs := v_diffs || format('Step at index %s: missing in second shape (first has ''%s'')',
                                   i, v_l->>'slug');
      continue;
    end if;
    -- Upstream's order: slug, type, dependencies, whenUnmet, whenExhausted, patterns.
    foreach v_key in array array['slug', 'stepType'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_label := case v_key when 'slug' then 'slug' when 'stepType' then 'type' else v_key end;
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_label,
                                     coalesce(v_l->>v_key, '<missing>'),
                                     coalesce(v_d->>v_key, '<missing>'));
      end if;
    end loop;
    if pgflow._sorted_text_array(v_l->'dependencies') is distinct from
       pgflow._sorted_text_array(v_d->'dependencies') then
      v_diffs := v_diffs || format('Step at index %s: dependencies differ [%s] vs [%s]', i,
        coalesce(array_to_string(pgflow._sorted_text_array(v_l->'dependencies'), ', '), '<missing>'),
        coalesce(array_to_string(pgflow._sorted_text_array(v_d->'dependencies'), ', '), '<missing>'));
    end if;
    foreach v_key in array array['whenUnmet', 'whenExhausted'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_key,
                                     coalesce(v_l->>v_key, '<missing>'),
                                     coalesce(v_d->>v_key, '<missing>'));
      end if;
    end loop;
    foreach v_key in array array['requiredInputPattern', 'forbiddenInputPattern'] loop
      if (v_l->v_key) is distinct from (v_d->v_key) then
        v_diffs := v_diffs || format('Step at index %s: %s differs ''%s'' vs ''%s''', i, v_key,
                                     coalesce((v_l->v_key)::text, '<missing>'),
                                     coalesce((v_d->v_key)::text, '<missing>'));
      end if;
    end loop;
  end loop;
  return v_diffs;
end;
$$;

-- Rejects a malformed shape with an error that names the problem, before anything is written.
create function pgflow._validate_flow_shape(p_shape jsonb) returns void
language plpgsql immutable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_step jsonb;
  i int := 0;
begin
  if jsonb_typeof(p_shape) is distinct from 'object' or jsonb_typeof(p_shape->'steps') is distinct from 'array' then
    raise exception 'Invalid flow shape: expected an object with a "steps" array'
      using errcode = 'invalid_parameter_value';
  end if;
  if p_shape ? 'options' and jsonb_typeof(p_shape->'options') is distinct from 'object' then
    raise exception 'Invalid flow shape: "options" must be an object' using errcode = 'invalid_parameter_value';
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    if jsonb_typeof(v_step) is distinct from 'object'
       or jsonb_typeof(v_step->'slug') is distinct from 'string'
       or jsonb_typeof(v_step->'stepType') is distinct from 'string'
       or jsonb_typeof(v_step->'dependencies') is distinct from 'array'
       or jsonb_typeof(v_step->'whenUnmet') is distinct from 'string'
       or jsonb_typeof(v_step->'whenExhausted') is distinct from 'string'
       or jsonb_typeof(v_step->'requiredInputPattern') is distinct from 'object'
       or jsonb_typeof(v_step->'forbiddenInputPattern') is distinct from 'object' then
      raise exception 'Invalid flow shape: step at index % needs string "slug", "stepType", '
        '"whenUnmet" and "whenExhausted", array "dependencies" and object '
        '"requiredInputPattern"/"forbiddenInputPattern"', i
        using errcode = 'invalid_parameter_value';
    end if;
    i := i + 1;
  end loop;
end;
$$;

create function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_step jsonb;
begin
  perform pgflow._validate_flow_shape(p_shape);
  perform pgflow.create_flow(
    p_flow_slug,
    (p_shape->'options'->>'maxAttempts')::int,
    (p_shape->'options'->>'baseDelay')::int,
    (p_shape->'options'->>'timeout')::int);
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    perform pgflow.add_step(
      flow_slug => p_flow_slug,
      step_slug => v_step->>'slug',
      deps_slugs => array(select jsonb_array_elements_text(v_step->'dependencies')),
      max_attempts => (v_step->'options'->>'maxAttempts')::int,
      base_delay => (v_step->'options'->>'baseDelay')::int,
      timeout => (v_step->'options'->>'timeout')::int,
      start_delay => (v_step->'options'->>'startDelay')::int,
      step_type => v_step->>'stepType',
      required_input_pattern => case when (v_step->'requiredInputPattern'->>'defined')::boolean
        then v_step->'requiredInputPattern'->'value' end,
      forbidden_input_pattern => case when (v_step->'forbiddenInputPattern'->>'defined')::boolean
        then v_step->'forbiddenInputPattern'->'value' end,
      when_unmet => coalesce(v_step->>'whenUnmet', 'skip'),
      when_exhausted => coalesce(v_step->>'whenExhausted', 'fail'));
  end loop;
end;
$$;

-- Deletes a flow, all its runs and its queue. Destructive: for development (local
-- recompilation) and operators. Fails for an unknown flow.
create function pgflow.delete_flow_and_data(p_flow_slug text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  perform pgflow._lock_flow_definition(p_flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug) then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  -- Runtime rows before the queue (lock order: runs, step states, tasks, then queue).
  perform 1 from pgflow.runs r where r.flow_slug = p_flow_slug order by r.run_id for update;
  delete from pgflow.step_tasks t where t.flow_slug = p_flow_slug;
  delete from pgflow.step_states s where s.flow_slug = p_flow_slug;
  delete from pgflow.runs r where r.flow_slug = p_flow_slug;
  delete from pgflow.deps d where d.flow_slug = p_flow_slug;
  delete from pgflow.steps s where s.flow_slug = p_flow_slug;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
  if exists (select 1 from pgmq.list_queues() q where q.queue_name = p_flow_slug) then
    perform pgmq.drop_queue(p_flow_slug);
  end if;
end;
$$;

-- Startup compilation (the only compile path since 0.16.0): create the flow from the worker's
-- shape, verify an existing one, recompile destructively in local development, or report a
-- mismatch (nothing changed) in production.
create function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb) returns jsonb
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_diffs text[];
begin
  perform pgflow._validate_flow_shape(shape);
  perform pgflow._lock_flow_definition(ensure_flow_compiled.flow_slug);

  if not exists (select 1 from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug) then
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
    return jsonb_build_object('status', 'compiled', 'differences', '[]'::jsonb);
  end if;

  v_diffs := pgflow._compare_flow_shapes(shape, pgflow._get_flow_shape(ensure_flow_compiled.flow_slug));
  if cardinality(v_diffs) = 0 then
    return jsonb_build_object('status', 'verified', 'differences', '[]'::jsonb);
  end if;

  if pgflow.is_local() then
    perform pgflow.delete_flow_and_data(ensure_flow_compiled.flow_slug);
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
    return jsonb_build_object('status', 'recompiled', 'differences', to_jsonb(v_diffs));
  end if;
  return jsonb_build_object('status', 'mismatch', 'differences', to_jsonb(v_diffs));
end;
$$;

-- ===========================================================================================
-- Runtime helpers (callers hold the run lock)
-- ===========================================================================================

-- Archives one task's message, if it has one. Archiving is idempotent.
create function pgflow._archive_task_message(p_run_id uuid, p_step_slug text, p_task_index int)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_msg bigint;
begin
  select t.flow_slug, t.message_id into v_flow, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgmq.archive(v_flow, v_msg);
  end if;
end;
$$;

-- Sets the visibility of one task's message to now + p_delay seconds (retries, recovery).
create function pgflow._set_task_message_vt(p_run_id uuid, p_step_slug text, p_task_index int,
                                            p_delay int)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_msg bigint;
begin
  select t.flow_slug, t.message_id into v_flow, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgmq.set_vt(v_flow, v_msg, p_delay);
  end if;
end;
$$;

-- Moves every queued or started task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages: task rows first, then queue rows.
create function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_batch record;
begin
  for v_batch in
    with terminated as (
      update pgflow.step_tasks t
      set status = p_status
      where t.run_id = p_run_id
        and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
        and t.status in ('queued', 'started')
      returning t.flow_slug, t.message_id)
    select x.flow_slug, array_agg(x.message_id order by x.message_id) as ids
    from terminated x
    where x.message_id is not null
    group by x.flow_slug
  loop
    perform pgmq.archive(v_batch.flow_slug, v_batch.ids);
  end loop;
end;
$$;

-- Fails a started run: status, event, and every unfinished task cancelled.
create function pgflow._fail_run(p_run_id uuid, p_error_message text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r set status = 'failed', failed_at = now()
  where r.run_id = p_run_id and r.status = 'started'
  returning * into v_run;
  if not found then
    return;
  end if;
  perform pgflow._emit(
    jsonb_build_object('event_type', 'run:failed', 'run_id', v_run.run_id, 'flow_slug', v_run.flow_slug,
                       'status', 'failed', 'failed_at', v_run.failed_at)
      || case when p_error_message is null then '{}'::jsonb
              else jsonb_build_object('error_message', p_error_message) end,
    'run:failed', v_run.flow_slug);
  perform pgflow._terminate_tasks(p_run_id, null, 'cancelled');
end;
$$;

-- The value a step's condition is tested against: the run input for a root step, otherwise
-- {dep_slug: output} of its completed dependencies (skipped ones are absent).
create function pgflow._condition_input(p_run_id uuid, p_flow_slug text, p_step_slug text,
                                        p_deps_count int)
returns jsonb
language plpgsql stable  -- plpgsql, not sql: its plans are cached (a hot path)
set search_path = ''
as $$
#variable_conflict use_column
begin
  if p_deps_count = 0 then
    return (select r.input from pgflow.runs r where r.run_id = p_run_id);
  end if;
  return coalesce((
    select jsonb_object_agg(d.dep_slug, ds.output)
    from pgflow.deps d
    join pgflow.step_states ds on ds.run_id = p_run_id and ds.step_slug = d.dep_slug
    where d.flow_slug = p_flow_slug and d.step_slug = p_step_slug and ds.status = 'completed'),
    '{}'::jsonb);
end;
$$;

-- After parents completed or were skipped: their created children lose one pending
-- dependency per parent; a map child whose task count is still unknown takes it from
-- `p_map_tasks` (NULL keeps it unknown).
create function pgflow._release_children(p_run_id uuid, p_flow_slug text, p_parents text[],
                                         p_map_tasks int, p_set_map_tasks boolean)
returns void
language plpgsql volatile  -- plpgsql, not sql: its plan is cached (a hot path)
set search_path = ''
as $$
#variable_conflict use_column
begin
  update pgflow.step_states c
  set remaining_deps = c.remaining_deps - x.n,
      initial_tasks = case when p_set_map_tasks and cs.step_type = 'map' then p_map_tasks
                           else c.initial_tasks end
  from (select d.step_slug, count(*)::int as n
        from pgflow.deps d
        where d.flow_slug = p_flow_slug and d.dep_slug = any(p_parents)
        group by d.step_slug) x,
       pgflow.steps cs
  where c.run_id = p_run_id and c.step_slug = x.step_slug and c.status = 'created'
    and cs.flow_slug = p_flow_slug and cs.step_slug = x.step_slug;
end;
$$;

-- ===========================================================================================
-- Run progression
-- ===========================================================================================

-- Skips the step and all its transitive dependents that are still created or started.
-- Returns how many steps it skipped (0 when called again).
create function pgflow._cascade_force_skip_steps(run_id uuid, step_slug text, skip_reason text)
returns int
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_slugs text[];
  v_state record;
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
  set status = 'skipped', skipped_at = now(), remaining_tasks = null,
      skip_reason = case when ss.step_slug = _cascade_force_skip_steps.step_slug
                         then _cascade_force_skip_steps.skip_reason else 'dependency_skipped' end
  where ss.run_id = _cascade_force_skip_steps.run_id and ss.step_slug = any(v_slugs);

  for v_state in
    select ss.* from pgflow.step_states ss join unnest(v_slugs) with ordinality u(slug, n)
      on ss.step_slug = u.slug
    where ss.run_id = _cascade_force_skip_steps.run_id order by u.n
  loop
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:skipped', 'run_id', v_state.run_id, 'flow_slug', v_flow,
      'step_slug', v_state.step_slug, 'status', 'skipped', 'skip_reason', v_state.skip_reason,
      'skipped_at', v_state.skipped_at), 'step:' || v_state.step_slug || ':skipped', v_flow);
  end loop;

  perform pgflow._terminate_tasks(_cascade_force_skip_steps.run_id, v_slugs, 'skipped');
  update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
  where r.run_id = _cascade_force_skip_steps.run_id;
  return cardinality(v_slugs);
end;
$$;

-- Evaluates the conditions of every step that just became ready, until nothing changes.
-- Returns false when a `fail` condition failed the run, true otherwise.
create function pgflow.cascade_resolve_conditions(run_id uuid) returns boolean
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_failing text[];
  v_skipped text[];
  v_cascading text[];
  v_cascaded int;
  v_state record;
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
      set status = 'failed', failed_at = now(), error_message = 'Condition not met'
      where ss.run_id = v_run.run_id and ss.step_slug = v_failing[1]
      returning * into v_state;
      perform pgflow._emit(jsonb_build_object(
        'event_type', 'step:failed', 'run_id', v_run.run_id, 'step_slug', v_state.step_slug,
        'status', 'failed', 'error_message', 'Condition not met', 'failed_at', v_state.failed_at),
        'step:' || v_state.step_slug || ':failed', v_run.flow_slug);
      perform pgflow._fail_run(v_run.run_id, 'Condition not met');
      return false;
    end if;

    -- 2. `skip`: the steps are skipped; their dependents run without them.
    if v_skipped is not null then
      update pgflow.step_states ss
      set status = 'skipped', skip_reason = 'condition_unmet', skipped_at = now()
      where ss.run_id = v_run.run_id and ss.step_slug = any(v_skipped);
      for v_state in
        select ss.* from pgflow.step_states ss join unnest(v_skipped) with ordinality u(slug, n)
          on ss.step_slug = u.slug
        where ss.run_id = v_run.run_id order by u.n
      loop
        perform pgflow._emit(jsonb_build_object(
          'event_type', 'step:skipped', 'run_id', v_run.run_id, 'flow_slug', v_run.flow_slug,
          'step_slug', v_state.step_slug, 'status', 'skipped', 'skip_reason', 'condition_unmet',
          'skipped_at', v_state.skipped_at), 'step:' || v_state.step_slug || ':skipped', v_run.flow_slug);
      end loop;
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

-- Completes ready steps that have no tasks (maps over empty arrays), wave after wave, and
-- releases their dependents. Returns how many steps it completed. Each wave completes at
-- least one step, so the loop ends after at most as many waves as the flow has steps.
create function pgflow.cascade_complete_taskless_steps(run_id uuid) returns int
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_slugs text[];
  v_total int := 0;
  v_state record;
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
    set status = 'completed', started_at = now(), completed_at = now(), remaining_tasks = 0,
        output = case when s.step_type = 'map' then '[]'::jsonb end
    from pgflow.steps s
    where ss.run_id = v_run.run_id and ss.step_slug = any(v_slugs)
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug;

    for v_state in
      select ss.* from pgflow.step_states ss join unnest(v_slugs) with ordinality u(slug, n)
        on ss.step_slug = u.slug
      where ss.run_id = v_run.run_id order by u.n
    loop
      perform pgflow._emit(jsonb_build_object(
        'event_type', 'step:completed', 'run_id', v_run.run_id, 'step_slug', v_state.step_slug,
        'status', 'completed', 'started_at', v_state.started_at, 'completed_at', v_state.completed_at,
        'remaining_tasks', 0, 'remaining_deps', 0, 'output', v_state.output),
        'step:' || v_state.step_slug || ':completed', v_run.flow_slug);
    end loop;

    -- An empty map's dependent map maps over that empty array: zero tasks as well.
    perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_slugs, 0, true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
    where r.run_id = v_run.run_id;
    v_total := v_total + cardinality(v_slugs);
  end loop;
  return v_total;
end;
$$;

-- Starts every ready step with a known, positive task count: one message per task in the
-- flow's queue (delayed by the step's start_delay) and one queued task row per message.
create function pgflow.start_ready_steps(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step record;
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
      set status = 'started', started_at = now(), remaining_tasks = ss.initial_tasks
      from ready
      where ss.run_id = v_run.run_id and ss.step_slug = ready.step_slug
      returning ss.*)
    select st.*, coalesce(s.opt_start_delay, 0) as start_delay
    from started st
    join pgflow.steps s on s.flow_slug = st.flow_slug and s.step_slug = st.step_slug
    order by st.step_slug
  loop
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:started', 'run_id', v_run.run_id, 'step_slug', v_step.step_slug,
      'status', 'started', 'started_at', v_step.started_at,
      'remaining_tasks', v_step.remaining_tasks, 'remaining_deps', v_step.remaining_deps),
      'step:' || v_step.step_slug || ':started', v_run.flow_slug);

    -- send_batch returns the ids in message order, so ordinality pairs id and task index.
    insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id)
    select v_run.flow_slug, v_run.run_id, v_step.step_slug, (m.n - 1)::int, m.msg_id
    from pgmq.send_batch(
           v_run.flow_slug,
           array(select jsonb_build_object('flow_slug', v_run.flow_slug, 'run_id', v_run.run_id,
                                           'step_slug', v_step.step_slug, 'task_index', i)
                 from generate_series(0, v_step.initial_tasks - 1) i order by i),
           v_step.start_delay) with ordinality as m(msg_id, n);
  end loop;
end;
$$;

-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf
-- steps (NULL when none completed). Only a started run can complete.
create function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = now(),
      output = (
        select jsonb_object_agg(ss.step_slug, ss.output)
        from pgflow.step_states ss
        where ss.run_id = r.run_id and ss.status = 'completed'
          and not exists (select 1 from pgflow.deps d
                          where d.flow_slug = ss.flow_slug and d.dep_slug = ss.step_slug))
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'run:completed', 'run_id', v_run.run_id, 'flow_slug', v_run.flow_slug,
      'status', 'completed', 'output', v_run.output, 'completed_at', v_run.completed_at),
      'run:completed', v_run.flow_slug);
  end if;
end;
$$;

-- Moves a run forward after a state change: conditions and taskless cascades until nothing
-- changes, then starts ready steps and completes the run if it is done. Returns false when
-- the run failed on the way.
create function pgflow._advance_run(p_run_id uuid) returns boolean
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  -- Fast path: no step is waiting to be evaluated or started (the common case after a task
  -- of a map or of a last step completes), so only completion is left to check.
  if exists (select 1 from pgflow.step_states ss
             where ss.run_id = p_run_id and ss.status = 'created' and ss.remaining_deps = 0) then
    loop
      if not pgflow.cascade_resolve_conditions(p_run_id) then
        return false;
      end if;
      exit when pgflow.cascade_complete_taskless_steps(p_run_id) = 0;
    end loop;
    perform pgflow.start_ready_steps(p_run_id);
  end if;
  perform pgflow.maybe_complete_run(p_run_id);
  return true;
end;
$$;

-- ===========================================================================================
-- Starting runs
-- ===========================================================================================

create function pgflow.start_flow(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_has_root_map boolean;
begin
  if not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow.flow_slug using errcode = 'no_data_found';
  end if;
  select exists (select 1 from pgflow.steps s
                 where s.flow_slug = start_flow.flow_slug and s.step_type = 'map' and s.deps_count = 0)
  into v_has_root_map;
  if v_has_root_map and start_flow.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow.flow_slug, jsonb_typeof(start_flow.input);
  elsif start_flow.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow.run_id, gen_random_uuid()), start_flow.flow_slug, start_flow.input,
          (select count(*) from pgflow.steps s where s.flow_slug = start_flow.flow_slug))
  returning * into v_run;

  insert into pgflow.step_states (flow_slug, run_id, step_slug, remaining_deps, initial_tasks)
  select s.flow_slug, v_run.run_id, s.step_slug, s.deps_count,
         -- (the inner CASE keeps constant folding from evaluating the length of a non-array)
         case when s.step_type = 'map' and s.deps_count = 0
                then jsonb_array_length(case when jsonb_typeof(v_run.input) = 'array' then v_run.input end)
              when s.step_type = 'map' then null
              else 1 end
  from pgflow.steps s
  where s.flow_slug = v_run.flow_slug;

  perform pgflow._emit(jsonb_build_object(
    'event_type', 'run:started', 'run_id', v_run.run_id, 'flow_slug', v_run.flow_slug,
    'input', v_run.input, 'status', 'started', 'remaining_steps', v_run.remaining_steps,
    'started_at', v_run.started_at), 'run:started', v_run.flow_slug);

  perform pgflow._advance_run(v_run.run_id);
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;

-- {"run": <runs row>, "steps": [<step_states rows in step order>]}, or NULL for an unknown run.
create function pgflow.get_run_with_states(run_id uuid) returns jsonb
language sql stable security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'run', to_jsonb(r),
    'steps', coalesce((
      select jsonb_agg(to_jsonb(ss) order by s.step_index)
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      where ss.run_id = r.run_id), '[]'::jsonb))
  from pgflow.runs r
  where r.run_id = get_run_with_states.run_id
$$;

create function pgflow.start_flow_with_states(flow_slug text, input jsonb, run_id uuid default null)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run_id uuid;
begin
  select r.run_id into v_run_id
  from pgflow.start_flow(start_flow_with_states.flow_slug, start_flow_with_states.input,
                         start_flow_with_states.run_id) r;
  return pgflow.get_run_with_states(v_run_id);
end;
$$;

-- ===========================================================================================
-- Claiming tasks (phase 2 of the two-phase claim; phase 1 is pgmq.read by the worker)
-- ===========================================================================================

-- Sets each message's visibility to clock_timestamp() + its offset in seconds.
create function pgflow.set_vt_batch(queue_name text, msg_ids bigint[], vt_offsets integer[])
returns table (msg_id bigint, read_ct integer, enqueued_at timestamptz, vt timestamptz,
               message jsonb, headers jsonb)
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  if msg_ids is null or vt_offsets is null or cardinality(msg_ids) = 0 then
    return;
  end if;
  if cardinality(msg_ids) <> cardinality(vt_offsets) then
    raise exception 'msg_ids length (%) must equal vt_offsets length (%)',
      cardinality(msg_ids), cardinality(vt_offsets);
  end if;
  return query execute format(
    'update pgmq.%I q set vt = clock_timestamp() + make_interval(secs => u.off)
     from unnest($1, $2) as u(id, off)
     where q.msg_id = u.id
     returning q.msg_id, q.read_ct, q.enqueued_at, q.vt, q.message, q.headers',
    pgmq.format_table_name(queue_name, 'q'))
  using msg_ids, vt_offsets;
end;
$$;

-- Claims the queued tasks behind the given messages for a worker: started, attempt counted,
-- message hidden for the step's effective timeout + 2 s. Returns one record per task claimed
-- by THIS call (rows another claim took are not returned). If any claimed message cannot be
-- hidden, the whole claim fails and is rolled back.
create function pgflow.start_tasks(flow_slug text, msg_ids bigint[], worker_id uuid)
returns setof pgflow.step_task_record
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_runs uuid[];
  v_steps text[];
  v_indexes int[];
  v_msgs bigint[];
  v_offsets int[];
  v_visible int;
begin
  -- Lock order: the runs (shared, in run_id order) before their tasks, so state changes of
  -- those runs wait for this claim and the claim never sees a run half-failed.
  perform 1 from pgflow.runs r
  where r.run_id in (select t.run_id from pgflow.step_tasks t
                     where t.flow_slug = start_tasks.flow_slug and t.message_id = any(msg_ids)
                       and t.status = 'queued')
  order by r.run_id
  for share;

  with claimed as (
    update pgflow.step_tasks t
    -- greatest(): a task committed after this transaction began is queued "later" than now().
    set status = 'started', attempts_count = t.attempts_count + 1,
        started_at = greatest(now(), t.queued_at),
        last_worker_id = start_tasks.worker_id
    from pgflow.runs r, pgflow.step_states ss
    where t.flow_slug = start_tasks.flow_slug and t.message_id = any(msg_ids)
      and t.status = 'queued'
      and r.run_id = t.run_id and r.status = 'started'
      and ss.run_id = t.run_id and ss.step_slug = t.step_slug and ss.status = 'started'
    returning t.run_id, t.step_slug, t.task_index, t.message_id)
  select array_agg(c.run_id order by c.message_id), array_agg(c.step_slug order by c.message_id),
         array_agg(c.task_index order by c.message_id), array_agg(c.message_id order by c.message_id),
         array_agg(coalesce(s.opt_timeout, f.opt_timeout) + 2 order by c.message_id)
  into v_runs, v_steps, v_indexes, v_msgs, v_offsets
  from claimed c
  join pgflow.steps s on s.flow_slug = start_tasks.flow_slug and s.step_slug = c.step_slug
  join pgflow.flows f on f.flow_slug = start_tasks.flow_slug;

  if v_msgs is null then
    return;
  end if;

  select count(*) into v_visible
  from pgflow.set_vt_batch(start_tasks.flow_slug, v_msgs, v_offsets);
  if v_visible <> cardinality(v_msgs) then
    raise exception 'start_tasks(): visibility updated % of % claimed messages',
      v_visible, cardinality(v_msgs);
  end if;

  return query
  select t.flow_slug, t.run_id, t.step_slug,
         case
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
         t.message_id,
         t.task_index,
         case when s.step_type = 'single' and s.deps_count = 0 then r.input end
  from unnest(v_runs, v_steps, v_indexes) with ordinality as k(run_id, step_slug, task_index, n)
  join pgflow.step_tasks t
    on t.run_id = k.run_id and t.step_slug = k.step_slug and t.task_index = k.task_index
  join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  join pgflow.runs r on r.run_id = t.run_id
  order by k.n;
end;
$$;

-- Deprecated since upstream 0.3.0; kept so old callers get a clear notice instead of an error.
create function pgflow.poll_for_tasks(queue_name text, vt integer, qty integer,
                                      max_poll_seconds integer default 5,
                                      poll_interval_ms integer default 100)
returns setof pgflow.step_task_record
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  raise notice 'DEPRECATED: poll_for_tasks is deprecated and returns nothing; read messages with pgmq.read_with_poll and claim them with pgflow.start_tasks';
  return;
end;
$$;

-- ===========================================================================================
-- Reporting results
-- ===========================================================================================

create function pgflow.complete_task(run_id uuid, step_slug text, task_index int, output jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_child text;
  v_type text;
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
      v_type := coalesce(jsonb_typeof(complete_task.output), 'null');
      update pgflow.step_tasks t
      set status = 'failed', failed_at = now(), output = complete_task.output,
          error_message = '[TYPE_VIOLATION] Produced ' || v_type || ' instead of array'
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
        and t.task_index = v_task.task_index
      returning * into v_task;
      perform pgflow._fail_run(v_run.run_id, null);
      update pgflow.step_states ss
      set status = 'failed', failed_at = now(),
          error_message = '[TYPE_VIOLATION] Map step ' || v_child
            || ' expects array input but dependency ' || complete_task.step_slug
            || ' produced ' || v_type
      where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug
      returning * into v_state;
      perform pgflow._emit(jsonb_build_object(
        'event_type', 'step:failed', 'run_id', v_run.run_id, 'step_slug', v_state.step_slug,
        'status', 'failed', 'error_message', v_state.error_message, 'failed_at', v_state.failed_at),
        'step:' || v_state.step_slug || ':failed', v_run.flow_slug);
      perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
      return next v_task;
      return;
    end if;
  end if;

  update pgflow.step_tasks t
  set status = 'completed', completed_at = now(), output = complete_task.output
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
    set remaining_tasks = 0, status = 'completed', completed_at = now(), output = v_output
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug
    returning * into v_state;
    perform pgflow._release_children(
      v_run.run_id, v_run.flow_slug, array[complete_task.step_slug],
      case when jsonb_typeof(v_output) = 'array' then jsonb_array_length(v_output) end,
      true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = v_run.run_id;
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:completed', 'run_id', v_run.run_id, 'step_slug', v_state.step_slug,
      'status', 'completed', 'output', v_state.output, 'completed_at', v_state.completed_at),
      'step:' || v_state.step_slug || ':completed', v_run.flow_slug);
    perform pgflow._advance_run(v_run.run_id);
  end if;

  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return next v_task;
end;
$$;

-- The failure path shared by fail_task and stall recovery. `p_exhaust` skips the retry: the
-- attempt is treated as the last one.
create function pgflow._fail_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                  p_error_message text, p_exhaust boolean)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
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
  set status = 'failed', failed_at = now(), error_message = p_error_message
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
  returning * into v_task;

  if v_step.when_exhausted = 'fail' then
    update pgflow.step_states ss
    set status = 'failed', failed_at = now(), error_message = p_error_message
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:failed', 'run_id', p_run_id, 'step_slug', p_step_slug,
      'status', 'failed', 'error_message', p_error_message, 'failed_at', v_state.failed_at),
      'step:' || p_step_slug || ':failed', v_run.flow_slug);
    perform pgflow._fail_run(p_run_id, p_error_message);
  else
    update pgflow.step_states ss
    set status = 'skipped', skip_reason = 'handler_failed', skipped_at = now(),
        error_message = p_error_message, remaining_tasks = null
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = p_run_id;
    perform pgflow._terminate_tasks(p_run_id, array[p_step_slug], 'skipped');
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:skipped', 'run_id', p_run_id, 'step_slug', p_step_slug,
      'status', 'skipped', 'skip_reason', 'handler_failed', 'error_message', p_error_message,
      'skipped_at', v_state.skipped_at), 'step:' || p_step_slug || ':skipped', v_run.flow_slug);
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

-- Reports a handler failure: retry with backoff while attempts remain (base_delay *
-- 2^attempts seconds), otherwise apply the step's when_exhausted mode.
create function pgflow.fail_task(run_id uuid, step_slug text, task_index int, error_message text)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
as $$
begin
  return query select * from pgflow._fail_task(run_id, step_slug, task_index, error_message, false);
end;
$$;

-- ===========================================================================================
-- Stall recovery and workers
-- ===========================================================================================

-- Recovers tasks whose worker vanished: started longer ago than the step's effective timeout
-- + 30 s, in started steps of started runs. Up to 3 times (while attempts remain) the task is
-- requeued and its message made visible at once; after that it is marked permanently stalled
-- and fails as exhausted, so when_exhausted decides and the run can finish. Runs busy with
-- another state change are skipped (SKIP LOCKED) and picked up on the next call. Returns the
-- number of tasks requeued. Run it periodically: live C++ workers do, or pg_cron (see
-- setup_requeue_stalled_tasks_cron).
create function pgflow.requeue_stalled_tasks() returns int
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_candidate record;
  v_task pgflow.step_tasks;
  v_requeued int := 0;
begin
  for v_candidate in
    select t.run_id, t.step_slug, t.task_index,
           coalesce(s.opt_timeout, f.opt_timeout) as timeout,
           coalesce(s.opt_max_attempts, f.opt_max_attempts) as max_attempts
    from pgflow.step_tasks t
    join pgflow.runs r on r.run_id = t.run_id
    join pgflow.step_states ss on ss.run_id = t.run_id and ss.step_slug = t.step_slug
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
    join pgflow.flows f on f.flow_slug = t.flow_slug
    where t.status = 'started' and t.permanently_stalled_at is null
      and r.status = 'started' and ss.status = 'started'
      and t.started_at < now() - make_interval(secs => coalesce(s.opt_timeout, f.opt_timeout) + 30)
    order by t.run_id, t.step_slug, t.task_index
  loop
    perform 1 from pgflow.runs r
    where r.run_id = v_candidate.run_id and r.status = 'started'
    for update skip locked;
    continue when not found;

    select * into v_task from pgflow.step_tasks t
    where t.run_id = v_candidate.run_id and t.step_slug = v_candidate.step_slug
      and t.task_index = v_candidate.task_index
    for update;
    -- Re-check under the locks: the task may have finished meanwhile.
    continue when v_task.status <> 'started'
      or v_task.started_at >= now() - make_interval(secs => v_candidate.timeout + 30)
      or not exists (select 1 from pgflow.step_states ss
                     where ss.run_id = v_task.run_id and ss.step_slug = v_task.step_slug
                       and ss.status = 'started');

    if v_task.requeued_count < 3 and v_task.attempts_count < v_candidate.max_attempts then
      update pgflow.step_tasks t
      set status = 'queued', started_at = null, last_worker_id = null,
          requeued_count = t.requeued_count + 1, last_requeued_at = now()
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
        and t.task_index = v_task.task_index;
      perform pgflow._set_task_message_vt(v_task.run_id, v_task.step_slug, v_task.task_index, 0);
      v_requeued := v_requeued + 1;
    else
      update pgflow.step_tasks t set permanently_stalled_at = now()
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
        and t.task_index = v_task.task_index;
      perform pgflow._fail_task(v_task.run_id, v_task.step_slug, v_task.task_index,
        format('Task stalled: no result within the %s s timeout (+30 s) after %s requeues',
               v_candidate.timeout, v_task.requeued_count),
        true);
    end if;
  end loop;
  return v_requeued;
end;
$$;

-- Schedules requeue_stalled_tasks() with pg_cron (servers that have it). Without pg_cron, live
-- C++ workers run stall recovery themselves.
create function pgflow.setup_requeue_stalled_tasks_cron(cron_interval text default '15 seconds')
returns text
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_job bigint;
begin
  if to_regnamespace('cron') is null then
    raise exception 'pg_cron is not installed in this database; C++ workers run stall recovery themselves, or install pg_cron first'
      using errcode = 'feature_not_supported';
  end if;
  begin
    perform cron.unschedule('pgflow_requeue_stalled_tasks');
  exception when others then
    null;  -- not scheduled yet
  end;
  select cron.schedule('pgflow_requeue_stalled_tasks', cron_interval,
                       'select pgflow.requeue_stalled_tasks()') into v_job;
  return format('Scheduled pgflow_requeue_stalled_tasks (every %s, job_id=%s)', cron_interval, v_job);
end;
$$;

create function pgflow.track_worker_function(function_name text) returns void
language sql volatile
set search_path = ''
as $$
  insert into pgflow.worker_functions (function_name, updated_at)
  values (track_worker_function.function_name, clock_timestamp())
  on conflict (function_name) do update set updated_at = clock_timestamp()
$$;

create function pgflow.mark_worker_stopped(worker_id uuid) returns void
language sql volatile
set search_path = ''
as $$
  update pgflow.workers w set stopped_at = clock_timestamp()
  where w.worker_id = mark_worker_stopped.worker_id
$$;

-- SECURITY DEFINER functions run as the schema owner: nobody calls them unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.get_run_with_states(uuid), pgflow.start_flow_with_states(text, jsonb, uuid),
  pgflow.requeue_stalled_tasks(), pgflow.setup_requeue_stalled_tasks_cron(text) from public;
