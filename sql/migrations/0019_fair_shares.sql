-- pgflow SQL core, 0019: fair shares per concurrency key.
--
-- A concurrency limit caps how many tasks run at once; it does not say whose. A tenant with
-- 10,000 queued tasks takes every slot of a limited step while another tenant's first task
-- waits for the backlog. A concurrency key (a path into the run input, e.g. ["tenant"]) on a
-- limited step or flow shares the limit's slots among the key's values round robin, weighted
-- by an optional number in the input, each value capped by an optional key limit
-- (docs/flow-control.md, "Fair shares").
--   * Flow control gains "concurrencyKey": {"path": [...], "limit"?: n, "weightPath"?: [...]}
--     on the flow and on a step (a step's replaces the flow's); compared like the limits
--     (mismatchKind 'flowControl'). A key needs a limit to share.
--   * concurrency_gates and step_concurrency_limits store it (a step row may now have a key
--     and no limit of its own); step_tasks.concurrency_key and key_weight hold a keyed task's
--     value and weight, taken from the run input when the task is queued.
--   * Admission serves a keyed step's values by stride scheduling (concurrency_keys: the
--     value with the lowest pass first, 1 / weight added per task), a few index probes per
--     task, whatever the backlog; the commit that queues a keyed task
--     activates its value (the admission trigger records it).
--
-- Data: new NULL columns (no flow has a key yet), one relaxed NOT NULL and five new checks on
-- tables of deployment options, a turn counter and a flag on gate rows, a new empty table
-- (concurrency_keys). Locks: ACCESS EXCLUSIVE on pgflow.step_tasks while its columns are added
-- and the partial index is built (no task is keyed yet, but the table is scanned once), which
-- holds up claims, results and starts until commit; it waits at most 10 s (lock_timeout) for
-- transactions that use step_tasks, after which it fails with nothing changed: run it again.
-- Applied by the pgflow migration runner in one
-- transaction. Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
-- [end migration-only]

-- Its condition function gains arguments; the trigger is created again below.
drop trigger gated_tasks_admitted on pgflow.step_tasks;

alter table pgflow.step_tasks add column concurrency_key text, add column key_weight real;
create index idx_step_tasks_held_keys on pgflow.step_tasks
  (flow_slug, step_slug, concurrency_key, priority desc, queued_at, run_id, task_index)
  where gate = 'held' and status = 'queued' and concurrency_key is not null;

alter table pgflow.concurrency_gates
  add column key_path text[],
  add column key_limit int,
  add column weight_path text[],
  add column turn bigint not null default 0,
  add column has_keys boolean not null default false,
  add constraint key_limit_is_positive check (key_limit > 0),
  add constraint key_options_need_a_key check (key_path is not null or (key_limit is null and weight_path is null));

alter table pgflow.step_concurrency_limits
  alter column step_limit drop not null,
  add column key_path text[],
  add column key_limit int,
  add column weight_path text[],
  add constraint step_has_a_limit_or_a_key check (step_limit is not null or key_path is not null),
  add constraint key_limit_is_positive check (key_limit > 0),
  add constraint key_options_need_a_key check (key_path is not null or (key_limit is null and weight_path is null));

create table pgflow.concurrency_keys (
  flow_slug   text not null references pgflow.concurrency_gates (flow_slug) on delete cascade,
  scope       text not null,
  key         text not null,
  pass        float8,
  last_turn   bigint,
  constraint concurrency_keys_pkey primary key (flow_slug, scope, key)
);
create index idx_concurrency_keys_next on pgflow.concurrency_keys
  (flow_slug, scope, pass, last_turn nulls first, key)
  where pass is not null;

set local check_function_bodies = off;

drop function pgflow._admit_tasks(text, boolean);

drop function pgflow._gated_flows();

drop function pgflow._note_gated_task(text);

-- ---- sql/schema/functions/limits/_normalize_flow_control.sql
-- A worker's flow-control options, checked against its shape and returned in the one spelling
-- they are stored and compared in, with only what is set ('{}' for none; NULL is none):
--   {"concurrencyLimit"?: n, "concurrencyKey"?: key,
--    "steps"?: {slug: {"concurrencyLimit"?: n, "concurrencyKey"?: key}}}
-- where key is {"path": [text, ...], "limit"?: n, "weightPath"?: [text, ...]} (since 0019).
-- A limit is a whole number from 1 to 2147483647; a path a non-empty array of non-empty
-- texts. A key shares a limit, so it needs one: a step's key its own limit or the flow's, the
-- flow's key the flow's limit or a step's. Raises invalid_parameter_value naming the offending
-- option, step or flow.
-- Called by: ensure_flow_compiled.
create or replace function pgflow._normalize_flow_control(p_flow_slug text, p_shape jsonb,
                                                          p_flow_control jsonb)
returns jsonb
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_out jsonb := '{}';
  v_steps jsonb := '{}';
  v_step jsonb;
  v_key text;
  v_value jsonb;
begin
  if p_flow_control is null or p_flow_control = 'null'::jsonb then
    return '{}';
  end if;
  if jsonb_typeof(p_flow_control) <> 'object' then
    raise exception 'Invalid flow control for flow "%": expected a JSON object, got %', p_flow_slug,
      jsonb_typeof(p_flow_control) using errcode = 'invalid_parameter_value';
  end if;
  for v_key, v_value in select * from jsonb_each(p_flow_control) loop
    if v_key = 'concurrencyLimit' then
      if v_value <> 'null'::jsonb then
        v_out := v_out || jsonb_build_object('concurrencyLimit',
                                             pgflow._checked_concurrency_limit(v_value, format('flow "%s"', p_flow_slug)));
      end if;
    elsif v_key = 'concurrencyKey' then
      if v_value <> 'null'::jsonb then
        v_out := v_out || jsonb_build_object('concurrencyKey',
                                             pgflow._checked_concurrency_key(v_value, format('flow "%s"', p_flow_slug)));
      end if;
    elsif v_key = 'steps' then
      if jsonb_typeof(v_value) <> 'object' then
        raise exception 'Invalid flow control for flow "%": "steps" must be an object keyed by step slug', p_flow_slug
          using errcode = 'invalid_parameter_value';
      end if;
    else
      raise exception 'Invalid flow control for flow "%": unknown option "%" (expected "concurrencyLimit", "concurrencyKey" or "steps")',
        p_flow_slug, v_key using errcode = 'invalid_parameter_value';
    end if;
  end loop;

  for v_key, v_value in select * from jsonb_each(coalesce(p_flow_control->'steps', '{}')) loop
    if not exists (select 1 from jsonb_array_elements(p_shape->'steps') s where s->>'slug' = v_key) then
      raise exception 'Invalid flow control for flow "%": step "%" is not in the flow', p_flow_slug, v_key
        using errcode = 'invalid_parameter_value';
    end if;
    if jsonb_typeof(v_value) <> 'object'
       or exists (select 1 from jsonb_object_keys(v_value) k where k not in ('concurrencyLimit', 'concurrencyKey')) then
      raise exception 'Invalid flow control for step "%" of flow "%": expected {"concurrencyLimit": n, "concurrencyKey": {...}}', v_key, p_flow_slug
        using errcode = 'invalid_parameter_value';
    end if;
    v_step := '{}';
    if coalesce(v_value->'concurrencyLimit', 'null'::jsonb) <> 'null'::jsonb then
      v_step := jsonb_build_object('concurrencyLimit',
        pgflow._checked_concurrency_limit(v_value->'concurrencyLimit', format('step "%s" of flow "%s"', v_key, p_flow_slug)));
    end if;
    if coalesce(v_value->'concurrencyKey', 'null'::jsonb) <> 'null'::jsonb then
      if not (v_step ? 'concurrencyLimit' or v_out ? 'concurrencyLimit') then
        raise exception 'Invalid flow control for step "%" of flow "%": a concurrency key shares a concurrency limit, and neither the step nor the flow has one',
          v_key, p_flow_slug using errcode = 'invalid_parameter_value';
      end if;
      v_step := v_step || jsonb_build_object('concurrencyKey',
        pgflow._checked_concurrency_key(v_value->'concurrencyKey', format('step "%s" of flow "%s"', v_key, p_flow_slug)));
    end if;
    if v_step <> '{}' then
      v_steps := v_steps || jsonb_build_object(v_key, v_step);
    end if;
  end loop;
  if v_out ? 'concurrencyKey' and not v_out ? 'concurrencyLimit'
     and not exists (select 1 from jsonb_each(v_steps) s where s.value ? 'concurrencyLimit') then
    raise exception 'Invalid flow control for flow "%": a concurrency key shares a concurrency limit, and neither the flow nor any of its steps has one',
      p_flow_slug using errcode = 'invalid_parameter_value';
  end if;
  if v_steps <> '{}' then
    v_out := v_out || jsonb_build_object('steps', v_steps);
  end if;
  return v_out;
end;
$$;

-- A concurrency limit as an int, or invalid_parameter_value naming `p_owner`.
-- Called by: _normalize_flow_control, _checked_concurrency_key.
create or replace function pgflow._checked_concurrency_limit(p_value jsonb, p_owner text)
returns int
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if jsonb_typeof(p_value) = 'number' and (p_value::text)::numeric = trunc((p_value::text)::numeric)
     and (p_value::text)::numeric between 1 and 2147483647 then
    return (p_value::text)::int;
  end if;
  raise exception 'Invalid concurrency limit % for %: expected a whole number from 1 to 2147483647', p_value, p_owner
    using errcode = 'invalid_parameter_value';
end;
$$;

-- A concurrency key in its stored spelling {"path": [...], "limit"?: n, "weightPath"?: [...]},
-- or invalid_parameter_value naming `p_owner` and the offending part (since 0019).
-- Called by: _normalize_flow_control.
create or replace function pgflow._checked_concurrency_key(p_value jsonb, p_owner text)
returns jsonb
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_out jsonb;
  v_name text;
begin
  if jsonb_typeof(p_value) <> 'object'
     or exists (select 1 from jsonb_object_keys(p_value) k where k not in ('path', 'limit', 'weightPath')) then
    raise exception 'Invalid concurrency key for %: expected {"path": ["field", ...], "limit"?: n, "weightPath"?: ["field", ...]}', p_owner
      using errcode = 'invalid_parameter_value';
  end if;
  foreach v_name in array array['path', 'weightPath'] loop
    if (v_name = 'path' or coalesce(p_value->v_name, 'null'::jsonb) <> 'null'::jsonb)
       and not (jsonb_typeof(p_value->v_name) = 'array' and jsonb_array_length(p_value->v_name) > 0
                and not exists (select 1 from jsonb_array_elements(p_value->v_name) e
                                where jsonb_typeof(e) <> 'string' or e #>> '{}' = '')) then
      raise exception 'Invalid concurrency key % % for %: expected a path into the run input, a non-empty array of field names such as ["tenant"]',
        v_name, coalesce(p_value->v_name, 'null'::jsonb), p_owner using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  v_out := jsonb_build_object('path', p_value->'path');
  if coalesce(p_value->'limit', 'null'::jsonb) <> 'null'::jsonb then
    v_out := v_out || jsonb_build_object('limit',
                                         pgflow._checked_concurrency_limit(p_value->'limit', 'the key of ' || p_owner));
  end if;
  if coalesce(p_value->'weightPath', 'null'::jsonb) <> 'null'::jsonb then
    v_out := v_out || jsonb_build_object('weightPath', p_value->'weightPath');
  end if;
  return v_out;
end;
$$;

-- ---- sql/schema/functions/limits/_get_flow_control.sql
-- A stored concurrency key in _normalize_flow_control's spelling; NULL without a key.
-- Called by: _get_flow_control.
create or replace function pgflow._concurrency_key_json(p_path text[], p_limit int, p_weight_path text[])
returns jsonb
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_path is not null then
    jsonb_strip_nulls(jsonb_build_object('path', to_jsonb(p_path), 'limit', p_limit,
                                         'weightPath', to_jsonb(p_weight_path)))
  end
$$;

-- A flow's stored flow-control options in _normalize_flow_control's spelling ('{}' for none).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_control(p_flow_slug text)
returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce((select jsonb_strip_nulls(jsonb_build_object(
                            'concurrencyLimit', g.flow_limit,
                            'concurrencyKey', pgflow._concurrency_key_json(g.key_path, g.key_limit, g.weight_path)))
                   from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug), '{}')
         || coalesce((select jsonb_build_object('steps', jsonb_object_agg(l.step_slug, jsonb_strip_nulls(jsonb_build_object(
                                                  'concurrencyLimit', l.step_limit,
                                                  'concurrencyKey', pgflow._concurrency_key_json(l.key_path, l.key_limit, l.weight_path)))))
                      from pgflow.step_concurrency_limits l where l.flow_slug = p_flow_slug
                      having count(*) > 0), '{}')
$$;

-- ---- sql/schema/functions/limits/_store_flow_control.sql
-- Persists a flow's normalized flow-control options (_normalize_flow_control), replacing any
-- it had: a gate row when any limit is set (with the flow's key), a row per step with a limit
-- or a key of its own, and which steps a limit applies to (steps.concurrency_limited, read by
-- the starts).
-- Locks: the caller holds the flow's definition lock; the gate row.
-- Called by: ensure_flow_compiled (a flow it compiles or recompiles).
create or replace function pgflow._store_flow_control(p_flow_slug text, p_flow_control jsonb)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  delete from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug;
  update pgflow.steps s
  set concurrency_limited = p_flow_control ? 'concurrencyLimit'
                            or coalesce(p_flow_control#>array['steps', s.step_slug], '{}') ? 'concurrencyLimit'
  where s.flow_slug = p_flow_slug;
  if p_flow_control = '{}' then
    return;
  end if;
  insert into pgflow.concurrency_gates (flow_slug, flow_limit, key_path, key_limit, weight_path, has_keys)
  values (p_flow_slug, (p_flow_control->>'concurrencyLimit')::int,
          pgflow._json_path(p_flow_control#>'{concurrencyKey,path}'),
          (p_flow_control#>>'{concurrencyKey,limit}')::int,
          pgflow._json_path(p_flow_control#>'{concurrencyKey,weightPath}'),
          p_flow_control ? 'concurrencyKey'
          or exists (select 1 from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s
                     where s.value ? 'concurrencyKey'));
  insert into pgflow.step_concurrency_limits (flow_slug, step_slug, step_limit, key_path, key_limit, weight_path)
  select p_flow_slug, s.key, (s.value->>'concurrencyLimit')::int,
         pgflow._json_path(s.value#>'{concurrencyKey,path}'),
         (s.value#>>'{concurrencyKey,limit}')::int,
         pgflow._json_path(s.value#>'{concurrencyKey,weightPath}')
  from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s;
end;
$$;

-- A JSON array of texts as text[] (NULL for NULL).
-- Called by: _store_flow_control.
create or replace function pgflow._json_path(p_path jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select case when p_path is not null then array(select jsonb_array_elements_text(p_path)) end
$$;

-- ---- sql/schema/functions/limits/_compare_flow_control.sql
-- Human-readable differences between a worker's flow-control options and the persisted ones,
-- worker first, both in _normalize_flow_control's spelling: the flow's limit and key, then each
-- step's (in byte order of slugs).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_control(p_local jsonb, p_db jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select array(
    select format('%s of %s differs: %s vs %s', o.label,
                  case when x.slug is null then 'the flow' else format('step ''%s''', x.slug) end,
                  coalesce(x.local_options->>o.name, 'none'), coalesce(x.db_options->>o.name, 'none'))
    from (select null::text as slug, p_local as local_options, p_db as db_options
          union all
          select s.slug, p_local#>array['steps', s.slug], p_db#>array['steps', s.slug]
          from (select jsonb_object_keys(coalesce(p_local->'steps', '{}')) as slug
                union
                select jsonb_object_keys(coalesce(p_db->'steps', '{}'))) s) x
    cross join (values (1, 'concurrencyLimit', 'Concurrency limit'),
                       (2, 'concurrencyKey', 'Concurrency key')) o(k, name, label)
    where (x.local_options->o.name) is distinct from (x.db_options->o.name)
    order by x.slug collate "C" nulls first, o.k)
$$;

-- ---- sql/schema/functions/limits/_concurrency_key_of.sql
-- The concurrency key value and weight of a run's tasks of one step (since 0019), or NULLs
-- when no key applies to the step: the step's own key, else the flow's. The value is the text
-- at the key's path in the run input (a JSON string unquoted, anything else as JSON text; ''
-- when the input has nothing or null there; a value over 200 bytes is 'md5:' and its hash);
-- the weight the number at its weight path when it is positive (clamped to 0.000001 ..
-- 1,000,000), else 1. Never raises: a run whose input lacks the key still
-- runs, sharing the '' key. PL/pgSQL, not SQL: it is on a start's path (hot_path/no_sql_functions).
-- Called by: _enqueue_step_tasks (a limited step's tasks).
create or replace function pgflow._concurrency_key_of(p_flow_slug text, p_step_slug text, p_input jsonb,
                                                      out key text, out weight real)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_key_path text[];
  v_weight_path text[];
begin
  select case when l.key_path is not null then l.key_path else g.key_path end,
         case when l.key_path is not null then l.weight_path else g.weight_path end
  into v_key_path, v_weight_path
  from pgflow.concurrency_gates g
  left join pgflow.step_concurrency_limits l on l.flow_slug = g.flow_slug and l.step_slug = p_step_slug
  where g.flow_slug = p_flow_slug;
  if v_key_path is null then
    return;
  end if;
  key := coalesce(p_input #>> v_key_path, '');
  if octet_length(key) > 200 then
    key := 'md5:' || md5(key);  -- it is indexed: a long value (an object) stands for its hash
  end if;
  weight := case when jsonb_typeof(p_input #> v_weight_path) = 'number'
                      and (p_input #>> v_weight_path)::numeric > 0
                 then greatest(least((p_input #>> v_weight_path)::numeric, 1000000), 0.000001)::real
                 else 1 end;
end;
$$;

-- ---- sql/schema/functions/limits/_activate_keys.sql
-- Fair shares (since 0019): makes key values with waiting tasks active in a flow's stride order
-- (concurrency_keys), each at the lowest active pass of its scope when it joins or comes back,
-- with this admission's turn as its last (so it is served soon, but never ahead of a value that
-- has waited since an earlier turn: a stream of new values cannot starve one that waits): `p_keys`
-- ([[step, key], ...]) are the values of tasks a committing transaction queued held; with
-- `p_repair` (stall recovery's sweep) every value with waiting tasks is found (one index probe
-- per value) — what a commit outside READ COMMITTED, which admits nothing, left — and then idle
-- rows are deleted.
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
        left join pgflow.step_concurrency_limits l on l.flow_slug = p_gate.flow_slug and l.step_slug = e->>0) x
  order by x.scope, x.key
  on conflict (flow_slug, scope, key) do update set pass = excluded.pass, last_turn = excluded.last_turn
    where k.pass is null;

  if p_repair then
    delete from pgflow.concurrency_keys k where k.flow_slug = p_gate.flow_slug and k.pass is null;
  end if;
end;
$$;

-- ---- sql/schema/functions/limits/_admit_tasks.sql
-- Gives waiting ('held') tasks of one limited flow the slots its limits leave free: a task is
-- admitted while its step has room (steps without a limit always do) and the flow has room (a
-- flow without a flow-wide limit always does). Which tasks: in a step without a concurrency
-- key, highest run priority first, then oldest first (queued_at, then run and task); under a
-- flow limit, across such steps in that order. Then, in steps with a key (since 0019), one
-- task at a time for the key value the stride order picks (concurrency_keys: lowest pass, then
-- served longest ago), the value's highest-priority, oldest task, within the value's key limit;
-- 1 / its weight is added to the value's pass. So a flow limit's free slots go to unkeyed
-- steps first. A task whose message is not sent yet waits for it. An admitted task's message
-- becomes visible when its step's start_delay, counted from when the task was queued, has
-- passed (at once, announced, in the common case). A slot is held from admission until the
-- task ends (completed, failed, skipped, cancelled), retries and stall recovery included; its
-- count is taken from the tasks themselves, so it cannot drift.
-- Key values: `p_keys` ([[step, key], ...]) are the values of tasks the committing transaction
-- queued held: each becomes active (pass: the lowest active pass of its scope) if it is not. A
-- value the stride order picks with no waiting task goes idle. The sweep's call (p_wait false)
-- activates every value that has waiting tasks (what a commit outside READ COMMITTED left) and
-- deletes idle rows.
-- Concurrency: admissions of one flow queue on its gate row, which each one updates (taking a
-- turn), and count after taking it, so each sees every earlier admission (READ COMMITTED: the
-- callers never admit under another isolation level); concurrency_keys rows are written only
-- here, under it. With p_wait false a gate another transaction holds is skipped instead. Held
-- tasks are taken FOR UPDATE SKIP LOCKED: a task some transaction is changing (cancelling its
-- run) is left to that one, never waited for; an admission it skips is made by the next one
-- (every transaction that queues a held task or frees a slot runs one; stall recovery sweeps:
-- _admit_waiting_tasks).
-- Locks: the gate row -> key value rows -> held task rows (never waited for) -> their queue
-- rows.
-- Called by: _admit_gated_tasks (at commit), _admit_waiting_tasks (p_wait false).
create or replace function pgflow._admit_tasks(p_flow_slug text, p_wait boolean default true,
                                               p_keys jsonb default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_gate pgflow.concurrency_gates;
  v_flow_room int;
  v_batch record;
  v_scope record;
  v_steps text[];
  v_room int[];
  v_skip text[];
  v_key pgflow.concurrency_keys;
  v_task record;
  v_queues text[] := '{}';
  v_ids bigint[] := '{}';
  v_delays int[] := '{}';
begin
  if p_wait then
    update pgflow.concurrency_gates g set turn = g.turn + 1
    where g.flow_slug = p_flow_slug
    returning g.* into v_gate;
  else
    update pgflow.concurrency_gates g set turn = g.turn + 1
    where g.flow_slug = (select k.flow_slug from pgflow.concurrency_gates k
                         where k.flow_slug = p_flow_slug for update skip locked)
    returning g.* into v_gate;
  end if;
  if not found then
    return;  -- the flow was deleted, or (p_wait false) another transaction is admitting
  end if;
  if v_gate.has_keys then
    perform pgflow._activate_keys(v_gate, p_keys, not p_wait);
  end if;
  v_flow_room := coalesce(v_gate.flow_limit - (select count(*) from pgflow.step_tasks t
                                               where t.flow_slug = p_flow_slug and t.gate = 'admitted'
                                                 and t.status in ('queued', 'started')),
                          2147483647);
  if v_flow_room <= 0 then
    return;
  end if;

  -- Steps without a key: in one statement.
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
      where s.flow_slug = p_flow_slug and s.concurrency_limited
        and coalesce(l.key_path, v_gate.key_path) is null),
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
    v_queues := v_queues || array_fill(v_batch.queue_name, array[cardinality(v_batch.ids)]);
    v_ids := v_ids || v_batch.ids;
    v_delays := v_delays || v_batch.delays;
    v_flow_room := v_flow_room - cardinality(v_batch.ids);
  end loop;

  -- Steps with a key: one task at a time, for the value the stride order picks, per scope (a
  -- step's own key; the flow's key over the steps that use it).
  for v_scope in
    select x.scope, x.key_limit, array_agg(x.step_slug order by x.step_slug collate "C") as steps
    from (select s.step_slug, case when l.key_path is not null then s.step_slug else '' end as scope,
                 case when l.key_path is not null then l.key_limit else v_gate.key_limit end as key_limit
          from pgflow.steps s
          left join pgflow.step_concurrency_limits l on l.flow_slug = s.flow_slug and l.step_slug = s.step_slug
          where v_gate.has_keys and s.flow_slug = p_flow_slug and s.concurrency_limited
            and coalesce(l.key_path, v_gate.key_path) is not null) x
    group by x.scope, x.key_limit
    order by x.scope collate "C"
  loop
    exit when v_flow_room <= 0;
    select array_agg(r.step_slug order by r.step_slug collate "C"),
           array_agg(least(v_flow_room, r.free) order by r.step_slug collate "C")
    into v_steps, v_room
    from (select s.step_slug,
                 coalesce(l.step_limit - (select count(*) from pgflow.step_tasks t
                                          where t.flow_slug = p_flow_slug and t.step_slug = s.step_slug
                                            and t.gate = 'admitted' and t.status in ('queued', 'started')),
                          2147483647) as free
          from unnest(v_scope.steps) s(step_slug)
          left join pgflow.step_concurrency_limits l on l.flow_slug = p_flow_slug and l.step_slug = s.step_slug) r;
    v_skip := '{}';
    while v_flow_room > 0 and 0 < any(v_room) loop
      select k.* into v_key from pgflow.concurrency_keys k
      where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.pass is not null
        and k.key <> all(v_skip)
      order by k.pass, k.last_turn nulls first, k.key
      limit 1;
      exit when not found;
      v_skip := v_skip || v_key.key;
      if v_scope.key_limit is not null
         and (select count(*) from pgflow.step_tasks t
              where t.flow_slug = p_flow_slug and t.gate = 'admitted' and t.status in ('queued', 'started')
                and t.concurrency_key = v_key.key and t.step_slug = any(v_scope.steps))
             >= v_scope.key_limit then
        continue;  -- at its key limit: its tasks wait
      end if;
      select t.run_id, t.step_slug, t.task_index, t.key_weight, s.opt_start_delay into v_task
      from unnest(v_steps, v_room) r(step_slug, free)
      join pgflow.steps s on s.flow_slug = p_flow_slug and s.step_slug = r.step_slug
      cross join lateral (
        select t.run_id, t.step_slug, t.task_index, t.priority, t.queued_at, t.key_weight
        from pgflow.step_tasks t
        where t.flow_slug = p_flow_slug and t.step_slug = r.step_slug and t.concurrency_key = v_key.key
          and t.gate = 'held' and t.status = 'queued' and t.message_id is not null
        order by t.priority desc, t.queued_at, t.run_id, t.task_index
        limit 1
        for update skip locked) t
      where r.free > 0
      order by t.priority desc, t.queued_at, t.run_id, t.step_slug, t.task_index
      limit 1;
      if not found then
        -- Nothing waiting (a task locked by another transaction counts as waiting): idle until
        -- a commit queues one again.
        if not exists (select 1 from unnest(v_steps) r(step_slug)
                       join pgflow.step_tasks t on t.flow_slug = p_flow_slug and t.step_slug = r.step_slug
                       where t.concurrency_key = v_key.key and t.gate = 'held' and t.status = 'queued') then
          update pgflow.concurrency_keys k set pass = null
          where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.key = v_key.key;
        end if;
        continue;
      end if;
      update pgflow.step_tasks t set gate = 'admitted'
      where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug and t.task_index = v_task.task_index
      returning t.queue_name, t.message_id,
                greatest(0, ceil(extract(epoch from t.queued_at + make_interval(secs => coalesce(v_task.opt_start_delay, 0))
                                                    - clock_timestamp())))::int as delay
      into v_batch;
      v_queues := v_queues || v_batch.queue_name;
      v_ids := v_ids || v_batch.message_id;
      v_delays := v_delays || v_batch.delay;
      update pgflow.concurrency_keys k
      set pass = k.pass + 1.0 / coalesce(v_task.key_weight, 1), last_turn = v_gate.turn
      where k.flow_slug = p_flow_slug and k.scope = v_scope.scope and k.key = v_key.key;
      v_room[array_position(v_steps, v_task.step_slug)] := v_room[array_position(v_steps, v_task.step_slug)] - 1;
      v_flow_room := v_flow_room - 1;
      v_skip := array_remove(v_skip, v_key.key);  -- it may be picked again
    end loop;
  end loop;

  for v_batch in
    select m.queue_name, array_agg(m.id order by m.id) as ids, array_agg(m.delay order by m.id) as delays
    from unnest(v_queues, v_ids, v_delays) m(queue_name, id, delay)
    group by m.queue_name
    order by m.queue_name
  loop
    perform pgflow.set_vt_batch(v_batch.queue_name, v_batch.ids, v_batch.delays);
    if 0 = any(v_batch.delays) then
      perform pgflow._announce_work(v_batch.queue_name);
    end if;
  end loop;
end;
$$;

-- ---- sql/schema/functions/limits/_admit_gated_tasks.sql
-- Concurrency limits at work: one deferred constraint trigger on step_tasks,
-- gated_tasks_admitted, whose WHEN clause lets through only rows a limit applies to (gate is
-- not NULL), so unlimited flows pay nothing:
--   * its condition (_note_gated_task) matches a task queued held (_enqueue_step_tasks touches
--     one new task of a limited step for it: an insert trigger would cost every start; or given
--     its held message: resume_run sends it after queueing the task) or an admitted task that
--     ended. It records the task's flow for this transaction (_transaction_record) — and, for a
--     held task with a concurrency key (since 0019), its step and key value, which
--     the admission activates — and is true only for the first such row of a flow, so one
--     event per flow is queued, not one per task (a 10,000-element map queues one);
--   * at commit each queued event runs _admit_gated_tasks, the first of which admits every
--     recorded flow, in byte order of slugs (_admit_tasks), and clears the record; the others
--     find it empty. Admitting at commit, not per row, is what makes the lock order hold: a
--     statement touches tasks in plan order, a commit locks gate rows sorted.
-- (A CASE, not AND: for a row without a gate the test is NULL, and NULL AND f() still calls f.)
-- A rolled-back subtransaction takes both its events and its part of the record with it.
-- Outside READ COMMITTED the commit admits nothing (its snapshot could miss a newer admission
-- and over-admit): the next admission of the flow does, at the latest stall recovery's sweep
-- (_admit_waiting_tasks, which also activates the key values of the tasks such a commit queued).
-- A caller that makes the constraint immediate (SET CONSTRAINTS ALL IMMEDIATE) admits after
-- each statement instead, in that statement's order of flows, and holds the gate rows until it
-- ends: still correct, but it holds up every commit of those flows meanwhile, and two such
-- transactions can deadlock (40P01, retried like any deadlock).
-- _admit_gated_tasks is SECURITY DEFINER: at commit it runs outside the pgflow function that
-- changed the task, as the session's role, which may not write tasks or queues itself.
-- Called by: the trigger below.

-- What this transaction recorded in a setting: the setting holds "<transaction id>:<value>",
-- so a value set for the session or by another transaction (SET, ALTER ROLE ... SET) reads as
-- NULL instead of hiding a flow from admission. The settings: pgflow.gated_flows (text[] of
-- flows to admit) and, since 0019, pgflow.gated_keys (jsonb [[flow, step, key], ...]: the key
-- values of held tasks queued, to activate).
create or replace function pgflow._transaction_record(p_setting text)
returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v text := coalesce(current_setting(p_setting, true), '');
begin
  if split_part(v, ':', 1) = pg_current_xact_id()::text then
    return substr(v, strpos(v, ':') + 1);
  end if;
  return null;
end;
$$;

create or replace function pgflow._note_gated_task(p_flow_slug text, p_step_slug text, p_key text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flows text[] := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  v_keys jsonb;
  v_entry jsonb := jsonb_build_array(jsonb_build_array(p_flow_slug, p_step_slug, p_key));
begin
  if p_key is not null then
    v_keys := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
    if not exists (select 1 from jsonb_array_elements(v_keys) e where e = v_entry->0) then
      perform set_config('pgflow.gated_keys', pg_current_xact_id()::text || ':' || (v_keys || v_entry)::text, true);
    end if;
  end if;
  if p_flow_slug = any(v_flows) then
    return false;
  end if;
  perform set_config('pgflow.gated_flows',
                     pg_current_xact_id()::text || ':' || array_append(v_flows, p_flow_slug)::text, true);
  return true;
end;
$$;

create or replace function pgflow._admit_gated_tasks()
returns trigger
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flows text[] := coalesce(pgflow._transaction_record('pgflow.gated_flows')::text[], '{}');
  v_keys jsonb := coalesce(pgflow._transaction_record('pgflow.gated_keys')::jsonb, '[]');
  v_flow text;
begin
  if cardinality(v_flows) = 0 then
    return null;
  end if;
  perform set_config('pgflow.gated_flows', '', true);
  perform set_config('pgflow.gated_keys', '', true);
  if current_setting('transaction_isolation') <> 'read committed' then
    return null;
  end if;
  for v_flow in select f from unnest(v_flows) f order by f collate "C" loop
    perform pgflow._admit_tasks(v_flow, true,
                                (select jsonb_agg(jsonb_build_array(e->>1, e->>2))
                                 from jsonb_array_elements(v_keys) e where e->>0 = v_flow));
  end loop;
  return null;
end;
$$;

revoke execute on function pgflow._admit_gated_tasks() from public;

create constraint trigger gated_tasks_admitted after update of status, message_id on pgflow.step_tasks
  deferrable initially deferred
  for each row
  when (case when new.gate = 'held' and new.status = 'queued'
                   or new.gate = 'admitted' and new.status not in ('queued', 'started')
              then pgflow._note_gated_task(new.flow_slug, new.step_slug,
                                           case when new.gate = 'held' then new.concurrency_key end)
              else false end)
  execute function pgflow._admit_gated_tasks();

-- ---- sql/schema/functions/limits/_admit_waiting_tasks.sql
-- The sweep of concurrency limits: admits the held tasks of every limited flow that has room.
-- A commit normally admits them (_admit_gated_tasks); this catches what no commit did:
-- a task an admission skipped because another transaction held it locked and then rolled
-- back, and the tasks a REPEATABLE READ or SERIALIZABLE transaction queued or freed (it does
-- not admit). With concurrency keys (since 0019) it also activates every key value with waiting
-- tasks and deletes idle ones (_activate_keys). A gate another transaction holds is skipped:
-- that one is admitting. Does nothing outside READ COMMITTED.
-- Locks: gate rows (never waited for) -> key value rows -> held task rows (never waited for)
-- -> their queue rows.
-- Called by: requeue_stalled_tasks (each pass of stall recovery: live workers call it every
-- stall_recovery_interval).
create or replace function pgflow._admit_waiting_tasks()
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flow text;
begin
  if current_setting('transaction_isolation') <> 'read committed' then
    return;
  end if;
  for v_flow in
    select g.flow_slug from pgflow.concurrency_gates g
    where exists (select 1 from pgflow.step_tasks t
                  where t.flow_slug = g.flow_slug and t.gate = 'held' and t.status = 'queued')
       or g.has_keys and exists (select 1 from pgflow.concurrency_keys k
                                 where k.flow_slug = g.flow_slug and k.pass is null)
    order by g.flow_slug collate "C"
  loop
    perform pgflow._admit_tasks(v_flow, false);
  end loop;
end;
$$;

-- ---- sql/schema/functions/runtime/_enqueue_step_tasks.sql
-- Gives a step that has just been started its tasks: publishes step:started, sends one message
-- per task to the step's queue (delayed by its start_delay) and inserts one queued task row per
-- message that snapshots that queue; announces the work when it is visible at once. No queue
-- DDL happens here. A step a concurrency limit applies to (`p_limited`: its own or its flow's,
-- since 0018) sends its messages held (invisible until admitted, 'infinity') and marks its
-- tasks 'held':
-- the commit admits as many as the limits allow (_admit_gated_tasks), highest run priority
-- first (the task carries its run's priority: set_run_priority). When a concurrency key applies
-- (the step's own, else the flow's; since 0019) each task also carries its run's key value and
-- weight, read from the run input (_concurrency_key_of).
-- Locks: the caller holds the run and the step state; task rows -> queue rows.
-- Plans: the insert is planned once per session (plan_cache_mode; since 0016): left to choose,
-- PostgreSQL planned it again on every call, as a custom plan for the task count always looked
-- cheaper than the generic one. It calls send_batch's implementation (the overload with headers
-- and a time), not a SQL wrapper, which would be parsed and planned again on every call.
-- Called by: start_ready_steps, start_flow_by_slug (root steps it creates started).
create or replace function pgflow._enqueue_step_tasks(p_run pgflow.runs, p_state pgflow.step_states,
                                                      p_queue_name text, p_start_delay int,
                                                      p_limited boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
set plan_cache_mode = force_generic_plan
as $$
declare
  v_key text;
  v_weight real;
begin
  perform pgflow._emit_step_event(p_state);
  if p_limited then
    select k.key, k.weight into v_key, v_weight
    from pgflow._concurrency_key_of(p_run.flow_slug, p_state.step_slug, p_run.input) k;
  end if;

  -- send_batch returns the ids in message order, so ordinality pairs id and task index.
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name,
                                 gate, priority, concurrency_key, key_weight)
  select p_run.flow_slug, p_run.run_id, p_state.step_slug, (m.n - 1)::int, m.msg_id, p_queue_name,
         case when p_limited then 'held' end,
         case when p_limited then coalesce((select rp.priority from pgflow.run_priorities rp
                                            where rp.run_id = p_run.run_id), 0) end,
         v_key, v_weight
  from pgmq.send_batch(
         p_queue_name,
         array(select jsonb_build_object('flow_slug', p_run.flow_slug, 'run_id', p_run.run_id,
                                         'step_slug', p_state.step_slug, 'task_index', i)
               from generate_series(0, p_state.initial_tasks - 1) i order by i),
         null::jsonb[],
         case when p_limited then 'infinity'::timestamptz
              else clock_timestamp() + make_interval(secs => p_start_delay) end) with ordinality as m(msg_id, n);
  if p_limited then
    -- The admission trigger fires on updates only (an insert trigger cost every start, limited
    -- or not): touching one new task queues this flow's admission at commit.
    update pgflow.step_tasks t set message_id = t.message_id
    where t.run_id = p_run.run_id and t.step_slug = p_state.step_slug and t.task_index = 0;
  elsif p_start_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;
