-- pgflow SQL core, 0018: concurrency limits.
--
-- A step that calls a rate-limited API, or a flow whose runs share a scarce resource, needs a
-- cap on how many of its tasks run at once across every worker process and host; a worker's
-- max_concurrent caps only itself. A concurrency limit is a deployment option beside the shape,
-- like the queue mode: at most N tasks of a step (a step limit) or of a whole flow (a flow
-- limit) are admitted at once; the others wait queued, their messages invisible, holding no
-- worker slot (docs/flow-control.md, "Concurrency limits").
--   * ensure_flow_compiled gains flow_control jsonb (default NULL: none), stored, verified and
--     compared like the queue mode (mismatchKind 'flowControl'); the six-argument signature is
--     replaced (a call with six arguments still resolves to it). grants.sql grants the new one
--     to pgflow_worker (run it again).
--   * pgflow.concurrency_gates (one row per limited flow: its lock and its flow limit) and
--     pgflow.step_concurrency_limits; step_tasks.gate ('held' | 'admitted' | NULL).
--   * A limited step's tasks are queued held; a deferred constraint trigger on step_tasks admits
--     them at commit, oldest first, as slots free (a task ends) — for rows with a gate only.
--   * resume_run queues a limited task held again.
--
-- Data: new NULL columns of step_tasks (no task is limited: no flow has limits yet), a new
-- column of steps (false everywhere), three new empty tables.
-- Locks: ACCESS EXCLUSIVE on pgflow.step_tasks (and pgflow.steps) while the columns, a check,
-- a partial index and the trigger are added (the index scans the table once), which holds up claims,
-- results and starts until commit; it waits at most 10 s (lock_timeout) for transactions that
-- use step_tasks, after which it fails with nothing changed: run it again. Applied by the
-- pgflow migration runner in one transaction. Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
-- [end migration-only]

alter table pgflow.step_tasks add column gate text
  constraint gate_is_valid check (gate in ('held', 'admitted'));
alter table pgflow.step_tasks add column priority int;
create index idx_step_tasks_gated on pgflow.step_tasks
  (flow_slug, gate, step_slug, priority desc, queued_at, run_id, task_index)
  where gate is not null and status in ('queued', 'started');
alter table pgflow.steps add column concurrency_limited boolean not null default false;

create table pgflow.concurrency_gates (
  flow_slug   text not null references pgflow.flows (flow_slug) on delete cascade,
  flow_limit  int,
  constraint concurrency_gates_pkey primary key (flow_slug),
  constraint flow_limit_is_positive check (flow_limit > 0)
);

create table pgflow.step_concurrency_limits (
  flow_slug   text not null,
  step_slug   text not null,
  step_limit  int not null,
  constraint step_concurrency_limits_pkey primary key (flow_slug, step_slug),
  constraint step_concurrency_limits_step_fkey foreign key (flow_slug, step_slug)
    references pgflow.steps (flow_slug, step_slug) on delete cascade,
  constraint step_concurrency_limits_gate_fkey foreign key (flow_slug)
    references pgflow.concurrency_gates (flow_slug) on delete cascade,
  constraint step_limit_is_positive check (step_limit > 0)
);

create table pgflow.run_priorities (
  run_id    uuid not null references pgflow.runs (run_id) on delete cascade,
  priority  int not null,
  constraint run_priorities_pkey primary key (run_id),
  constraint priority_is_not_the_default check (priority <> 0)
);

-- [migration-only: keep grants]
-- Roles granted the six-argument ensure_flow_compiled (pgflow_worker, or an application's own)
-- get the seven-argument one below: workers keep starting before grants.sql runs again.
select set_config('pgflow.migration_grantees', coalesce(string_agg(quote_ident(a.grantee::regrole::text), ','), ''), true)
from pg_catalog.pg_proc p, pg_catalog.aclexplode(p.proacl) a
where p.oid = 'pgflow.ensure_flow_compiled(text, jsonb, integer, text, jsonb, text)'::regprocedure
  and a.privilege_type = 'EXECUTE' and a.grantee <> 0 and a.grantee <> p.proowner;
-- [end migration-only]

set local check_function_bodies = off;

drop function pgflow._enqueue_step_tasks(pgflow.runs, pgflow.step_states, text, integer);

drop function pgflow.ensure_flow_compiled(text, jsonb, integer, text, jsonb, text);

-- ---- sql/schema/functions/definitions/ensure_flow_compiled.sql
-- Startup compilation, the only compile path since upstream 0.16.0.
--
-- ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map, flow_alias,
-- flow_control): startup deployment for workers of this database's protocol. The worker's
-- deployment is its shape plus its queue mode (`flow` | `step`, upstream 0.17's contract),
-- optionally the route map it derived ([{stepSlug, queueName}], which must equal what
-- _flow_route derives), the alias it belongs to (NULL: its own slug) and its flow-control
-- options (since 0018; NULL: none): {"concurrencyLimit"?: n, "steps"?: {slug: {"concurrencyLimit": n}}}. In one transaction, under the alias lock and then
-- the flow's definition lock (seed 004):
--   1. alias membership: a new flow joins `flow_alias`; an existing one must already belong to
--      it (membership is immutable: any other alias is an error, even locally);
--   2. compile or verify: creates a missing flow (compiled), verifies an existing one - shape,
--      queue mode and route, flow control, and that its queues are present and owned (verified) -,
--      recompiles it on a local database keeping its identity, alias membership and activation
--      (recompiled), or reports the differences and changes nothing (mismatch). A different
--      queue mode, route or flow control is a mismatch like a different shape; mismatchKind
--      says which ('shape' when the shape differs, else 'routing' when the queue mode or route
--      does, else 'flowControl');
--   3. activation: only an alias without an active version gets one (this flow: activated);
--      otherwise nothing changes (active: this flow is the active version; inactive: another
--      one is). A new version never replaces the active one: activate_flow_version does.
-- Returns {status, differences, mismatchKind, queue_mode, routes (the persisted route map),
-- queue_name (the flow's queue in mode `flow`), flow_alias, flow_control (the persisted
-- options), activation, active_flow_slug}.
--
-- ensure_flow_compiled(flow_slug, shape): upstream 0.16.0's signature. Workers of 0.16.0 call
-- it first; it refuses them with the protocol error, so they stop before registering.
--
-- SECURITY DEFINER (since schema 0012): the worker role has no write access to definitions;
-- it compiles only through this function, which validates the shape and derives every queue
-- name (docs/security.md). A destructive local recompilation still needs a caller (login) that
-- may delete runs.
-- Locks: the alias lock, the flow's definition lock (then whatever compilation takes); every
-- wait is bounded (_bound_lock_waits) and a timeout names the holder.
-- Called by: EdgeWorker startup (src/worker/worker.cc).
create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb) returns jsonb
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._require_worker_protocol(null);
  return null;
end;
$$;

create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb, worker_protocol int,
                                                       queue_mode text default 'flow',
                                                       route_map jsonb default null,
                                                       flow_alias text default null,
                                                       flow_control jsonb default null)
returns jsonb
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
  v_mode text := coalesce(ensure_flow_compiled.queue_mode, 'flow');
  v_alias text := coalesce(ensure_flow_compiled.flow_alias, ensure_flow_compiled.flow_slug);
  v_route jsonb;
  v_flow pgflow.flows;
  v_active text;
  v_activation text;
  v_shape_diffs text[] := '{}';
  v_route_diffs text[] := '{}';
  v_control jsonb;
  v_control_diffs text[] := '{}';
  v_status text;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  perform pgflow._validate_flow_shape(shape);
  -- Shapes of older upstream DSL versions omit some step fields: compile and compare them
  -- with upstream's defaults.
  shape := pgflow._with_shape_defaults(shape);
  v_control := pgflow._normalize_flow_control(ensure_flow_compiled.flow_slug, shape,
                                              ensure_flow_compiled.flow_control);
  if v_mode not in ('flow', 'step') then
    raise exception 'Invalid queue mode "%" for flow "%": expected "flow" or "step"', v_mode,
      ensure_flow_compiled.flow_slug using errcode = 'invalid_parameter_value';
  end if;
  -- (A self-alias is the slug, checked with the shape.)
  if ensure_flow_compiled.flow_alias is not null and pgflow._slug_problem(v_alias) is not null then
    raise exception 'Invalid flow alias "%": it %', v_alias, pgflow._slug_problem(v_alias)
      using errcode = 'check_violation', constraint = 'flow_alias_is_valid';
  end if;
  -- The route this deployment gets; a worker that derived another one has a bug, not a
  -- deployment difference.
  select coalesce(jsonb_agg(jsonb_build_object('stepSlug', r.step_slug, 'queueName', r.queue_name)
                            order by r.step_index), '[]'::jsonb)
  into v_route
  from pgflow._flow_route(ensure_flow_compiled.flow_slug, shape, v_mode) r;
  if route_map is not null and route_map is distinct from v_route then
    raise exception 'The route map of the worker for flow "%" differs from the route pgflow derives: % vs %',
      ensure_flow_compiled.flow_slug, route_map, v_route using errcode = 'invalid_parameter_value';
  end if;

  -- 1. Membership, under the alias lock and then the flow's.
  perform pgflow._lock_flow_alias(v_alias);
  perform pgflow._lock_flow_definition(ensure_flow_compiled.flow_slug);
  select * into v_flow from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug;
  if found and v_flow.flow_alias <> v_alias then
    raise exception 'Flow "%" belongs to alias "%"; this worker deploys it under alias "%" (alias membership is immutable: deploy a new flow slug under that alias)',
      v_flow.flow_slug, v_flow.flow_alias, v_alias using errcode = 'object_not_in_prerequisite_state';
  end if;
  select a.flow_slug into v_active from pgflow.flow_aliases a where a.flow_alias = v_alias;

  -- 2. Compile or verify.
  if v_flow.flow_slug is null then
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape, v_mode, v_alias);
    perform pgflow._store_flow_control(ensure_flow_compiled.flow_slug, v_control);
    v_status := 'compiled';
  else
    v_shape_diffs := pgflow._compare_flow_shapes(shape, pgflow._get_flow_shape(ensure_flow_compiled.flow_slug));
    v_route_diffs := pgflow._compare_flow_routes(v_mode, v_route, v_flow.queue_mode,
                                                 pgflow._get_flow_route(ensure_flow_compiled.flow_slug));
    v_control_diffs := pgflow._compare_flow_control(v_control, pgflow._get_flow_control(ensure_flow_compiled.flow_slug));
    if cardinality(v_shape_diffs) + cardinality(v_route_diffs) + cardinality(v_control_diffs) = 0 then
      v_status := 'verified';
      -- Verifying also checks that the flow's queues are present and owned.
      if v_mode = 'step' then
        perform pgflow._verify_step_queues(ensure_flow_compiled.flow_slug);
      else
        perform pgflow._provision_flow_queue(ensure_flow_compiled.flow_slug);
        -- A flow without steps owns its queue only as "created together with the flow" (see
        -- _provision_flow_queue, delete_flow_and_data). If the queue of such a flow persisted
        -- earlier (create_flow alone) had to be provisioned just now, the definition is
        -- complete only now: record it, or the next verification would take the queue for a
        -- foreign one.
        update pgflow.flows f set created_at = now()
        where f.flow_slug = ensure_flow_compiled.flow_slug and f.created_at <> now()
          and not exists (select 1 from pgflow.steps s where s.flow_slug = f.flow_slug)
          and exists (select 1 from pgmq.meta m
                      where m.queue_name = lower(f.flow_slug) and m.created_at = now());
      end if;
    elsif pgflow.is_local() then
      -- (As the owner: the login must be one that may delete the runs this recompilation
      -- deletes, as before this function ran with its caller's rights.)
      if not has_table_privilege(session_user, 'pgflow.runs', 'DELETE') then
        raise exception 'Flow "%" differs from the deployed definition; recompiling it on this local database deletes its runs, which role "%" may not delete (develop as the owner of schema pgflow)',
          ensure_flow_compiled.flow_slug, session_user using errcode = 'insufficient_privilege';
      end if;
      -- The identity row stays: its alias membership and activation survive.
      perform pgflow._delete_flow_contents(ensure_flow_compiled.flow_slug);
      perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape, v_mode, v_alias);
      perform pgflow._store_flow_control(ensure_flow_compiled.flow_slug, v_control);
      v_status := 'recompiled';
    else
      v_status := 'mismatch';
    end if;
  end if;

  -- 3. Activation: only an alias without an active version gets one.
  if v_status = 'mismatch' then
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'active' else 'inactive' end;
  elsif v_active is null then
    -- (_create_flow has done it for a new flow; the pointer row decides either way.)
    insert into pgflow.flow_aliases (flow_alias, flow_slug) values (v_alias, ensure_flow_compiled.flow_slug)
    on conflict (flow_alias) do nothing;
    select a.flow_slug into v_active from pgflow.flow_aliases a where a.flow_alias = v_alias;
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'activated' else 'inactive' end;
  else
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'active' else 'inactive' end;
  end if;

  select * into v_flow from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug;
  perform set_config('lock_timeout', v_restore, true);
  return jsonb_build_object(
    'status', v_status,
    'differences', to_jsonb(v_shape_diffs || v_route_diffs || v_control_diffs),
    'mismatchKind', case when v_status not in ('mismatch', 'recompiled') then null
                         when cardinality(v_shape_diffs) > 0 then 'shape'
                         when cardinality(v_route_diffs) > 0 then 'routing' else 'flowControl' end,
    'queue_mode', v_flow.queue_mode,
    'routes', pgflow._get_flow_route(ensure_flow_compiled.flow_slug),
    'queue_name', case when v_flow.queue_mode = 'flow' then lower(ensure_flow_compiled.flow_slug) end,
    'flow_alias', v_alias,
    'flow_control', pgflow._get_flow_control(ensure_flow_compiled.flow_slug),
    'activation', v_activation,
    'active_flow_slug', v_active);
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('a lock while compiling flow "%s"', ensure_flow_compiled.flow_slug),
                                     null, null, v_since, v_error);
end;
$$;

-- SECURITY DEFINER: nobody calls it unless granted (sql/contrib/grants.sql grants it to
-- pgflow_worker).
revoke execute on function pgflow.ensure_flow_compiled(text, jsonb, int, text, jsonb, text, jsonb) from public;

-- ---- sql/schema/functions/limits/_normalize_flow_control.sql
-- A worker's flow-control options, checked against its shape and returned in the one spelling
-- they are stored and compared in: {"concurrencyLimit"?: n, "steps"?: {slug: {"concurrencyLimit": n}}}
-- with only the limits that are set ('{}' for none; NULL is none). A limit is a whole number
-- from 1 to 2147483647. Raises invalid_parameter_value naming the offending key or step.
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
    elsif v_key = 'steps' then
      if jsonb_typeof(v_value) <> 'object' then
        raise exception 'Invalid flow control for flow "%": "steps" must be an object keyed by step slug', p_flow_slug
          using errcode = 'invalid_parameter_value';
      end if;
    else
      raise exception 'Invalid flow control for flow "%": unknown option "%" (expected "concurrencyLimit" or "steps")',
        p_flow_slug, v_key using errcode = 'invalid_parameter_value';
    end if;
  end loop;

  for v_key, v_value in select * from jsonb_each(coalesce(p_flow_control->'steps', '{}')) loop
    if not exists (select 1 from jsonb_array_elements(p_shape->'steps') s where s->>'slug' = v_key) then
      raise exception 'Invalid flow control for flow "%": step "%" is not in the flow', p_flow_slug, v_key
        using errcode = 'invalid_parameter_value';
    end if;
    if jsonb_typeof(v_value) <> 'object'
       or exists (select 1 from jsonb_object_keys(v_value) k where k <> 'concurrencyLimit') then
      raise exception 'Invalid flow control for step "%" of flow "%": expected {"concurrencyLimit": n}', v_key, p_flow_slug
        using errcode = 'invalid_parameter_value';
    end if;
    if coalesce(v_value->'concurrencyLimit', 'null'::jsonb) <> 'null'::jsonb then
      v_steps := v_steps || jsonb_build_object(v_key, jsonb_build_object('concurrencyLimit',
        pgflow._checked_concurrency_limit(v_value->'concurrencyLimit', format('step "%s" of flow "%s"', v_key, p_flow_slug))));
    end if;
  end loop;
  if v_steps <> '{}' then
    v_out := v_out || jsonb_build_object('steps', v_steps);
  end if;
  return v_out;
end;
$$;

-- A concurrency limit as an int, or invalid_parameter_value naming `p_owner`.
-- Called by: _normalize_flow_control.
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

-- ---- sql/schema/functions/limits/_get_flow_control.sql
-- A flow's stored flow-control options in _normalize_flow_control's spelling ('{}' for none).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_control(p_flow_slug text)
returns jsonb
language sql stable
set search_path = pg_catalog, pg_temp
as $$
  select coalesce((select jsonb_strip_nulls(jsonb_build_object('concurrencyLimit', g.flow_limit))
                   from pgflow.concurrency_gates g where g.flow_slug = p_flow_slug), '{}')
         || coalesce((select jsonb_build_object('steps', jsonb_object_agg(l.step_slug,
                                                  jsonb_build_object('concurrencyLimit', l.step_limit)))
                      from pgflow.step_concurrency_limits l where l.flow_slug = p_flow_slug
                      having count(*) > 0), '{}')
$$;

-- ---- sql/schema/functions/limits/_store_flow_control.sql
-- Persists a flow's normalized flow-control options (_normalize_flow_control), replacing any
-- it had: a gate row when any limit is set, a row per limited step, and which steps a limit
-- applies to (steps.concurrency_limited, read by the starts).
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
                            or coalesce(p_flow_control->'steps', '{}') ? s.step_slug
  where s.flow_slug = p_flow_slug;
  if p_flow_control = '{}' then
    return;
  end if;
  insert into pgflow.concurrency_gates (flow_slug, flow_limit)
  values (p_flow_slug, (p_flow_control->>'concurrencyLimit')::int);
  insert into pgflow.step_concurrency_limits (flow_slug, step_slug, step_limit)
  select p_flow_slug, s.key, (s.value->>'concurrencyLimit')::int
  from jsonb_each(coalesce(p_flow_control->'steps', '{}')) s;
end;
$$;

-- ---- sql/schema/functions/limits/_compare_flow_control.sql
-- Human-readable differences between a worker's flow-control options and the persisted ones,
-- worker first, both in _normalize_flow_control's spelling: the flow's limit, then each step
-- whose limit differs (in byte order of slugs).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_control(p_local jsonb, p_db jsonb)
returns text[]
language sql immutable
set search_path = pg_catalog, pg_temp
as $$
  select array(
    select d from (
      select 0 as k, '' as slug,
             format('Concurrency limit of the flow differs: %s vs %s',
                    coalesce(p_local->>'concurrencyLimit', 'none'), coalesce(p_db->>'concurrencyLimit', 'none')) as d
      where (p_local->'concurrencyLimit') is distinct from (p_db->'concurrencyLimit')
      union all
      select 1, s.slug,
             format('Concurrency limit of step ''%s'' differs: %s vs %s', s.slug,
                    coalesce(p_local#>>array['steps', s.slug, 'concurrencyLimit'], 'none'),
                    coalesce(p_db#>>array['steps', s.slug, 'concurrencyLimit'], 'none'))
      from (select jsonb_object_keys(coalesce(p_local->'steps', '{}')) as slug
            union
            select jsonb_object_keys(coalesce(p_db->'steps', '{}'))) s
      where (p_local#>array['steps', s.slug]) is distinct from (p_db#>array['steps', s.slug])
    ) x
    order by x.k, x.slug collate "C")
$$;

-- ---- sql/schema/functions/limits/_admit_tasks.sql
-- Gives waiting ('held') tasks of one limited flow the slots its limits leave free, highest
-- run priority first, then oldest first (queued_at, then run and task; a task whose message is
-- not sent yet waits for it): a
-- task is admitted while its step has room (steps
-- without a limit always do) and the flow has room (a flow without a flow-wide limit always
-- does). An admitted task's message becomes visible when its step's start_delay, counted from
-- when the task was queued, has passed (at once, announced, in the common case). A slot is
-- held from admission until the task ends (completed, failed, skipped, cancelled), retries
-- and stall recovery included; its count is taken from the tasks themselves, so it cannot
-- drift.
-- Concurrency: admissions of one flow queue on its gate row, which each one updates, and count
-- after taking it, so each sees every earlier admission (READ COMMITTED: the callers never
-- admit under another isolation level). With p_wait false a gate another transaction holds is
-- skipped instead. Held tasks are taken FOR UPDATE SKIP LOCKED: a task some transaction is
-- changing (cancelling its run) is left to that one, never waited for; an admission it skips
-- is made by the next one (every transaction that queues a held task or frees a slot runs
-- one; stall recovery sweeps: _admit_waiting_tasks).
-- Locks: the gate row -> held task rows (never waited for) -> their queue rows.
-- Called by: _admit_gated_tasks (at commit), _admit_waiting_tasks (p_wait false).
create or replace function pgflow._admit_tasks(p_flow_slug text, p_wait boolean default true)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flow_limit int;
  v_flow_room int;
  v_batch record;
begin
  if p_wait then
    update pgflow.concurrency_gates g set flow_limit = g.flow_limit
    where g.flow_slug = p_flow_slug
    returning g.flow_limit into v_flow_limit;
  else
    update pgflow.concurrency_gates g set flow_limit = g.flow_limit
    where g.flow_slug = (select k.flow_slug from pgflow.concurrency_gates k
                         where k.flow_slug = p_flow_slug for update skip locked)
    returning g.flow_limit into v_flow_limit;
  end if;
  if not found then
    return;  -- the flow was deleted, or (p_wait false) another transaction is admitting
  end if;
  v_flow_room := coalesce(v_flow_limit - (select count(*) from pgflow.step_tasks t
                                          where t.flow_slug = p_flow_slug and t.gate = 'admitted'
                                            and t.status in ('queued', 'started')),
                          2147483647);
  if v_flow_room <= 0 then
    return;
  end if;

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
      where s.flow_slug = p_flow_slug),
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
--     ended. It records
--     the task's flow for this transaction (_gated_flows) and is true only for the first such
--     row of a flow, so one event per flow is queued, not one per task (a 10,000-element map
--     queues one);
--   * at commit each queued event runs _admit_gated_tasks, the first of which admits every
--     recorded flow, in byte order of slugs (_admit_tasks), and clears the record; the others
--     find it empty. Admitting at commit, not per row, is what makes the lock order hold: a
--     statement touches tasks in plan order, a commit locks gate rows sorted.
-- (A CASE, not AND: for a row without a gate the test is NULL, and NULL AND f() still calls f.)
-- A rolled-back subtransaction takes both its events and its part of the record with it.
-- Outside READ COMMITTED the commit admits nothing (its snapshot could miss a newer admission
-- and over-admit): the next admission of the flow does, at the latest stall recovery's sweep
-- (_admit_waiting_tasks).
-- A caller that makes the constraint immediate (SET CONSTRAINTS ALL IMMEDIATE) admits after
-- each statement instead, in that statement's order of flows, and holds the gate rows until it
-- ends: still correct, but it holds up every commit of those flows meanwhile, and two such
-- transactions can deadlock (40P01, retried like any deadlock).
-- _admit_gated_tasks is SECURITY DEFINER: at commit it runs outside the pgflow function that
-- changed the task, as the session's role, which may not write tasks or queues itself.
-- Called by: the trigger below.

-- The flows this transaction recorded: the setting pgflow.gated_flows holds
-- "<transaction id>:<text[]>", so a value set for the session or by another transaction (SET,
-- ALTER ROLE ... SET) reads as none instead of hiding a flow from admission.
create or replace function pgflow._gated_flows()
returns text[]
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v text := coalesce(current_setting('pgflow.gated_flows', true), '');
begin
  if split_part(v, ':', 1) = pg_current_xact_id()::text then
    return substr(v, strpos(v, ':') + 1)::text[];
  end if;
  return '{}';
end;
$$;

create or replace function pgflow._note_gated_task(p_flow_slug text)
returns boolean
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_flows text[] := pgflow._gated_flows();
begin
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
  v_flows text[] := pgflow._gated_flows();
  v_flow text;
begin
  if cardinality(v_flows) = 0 then
    return null;
  end if;
  perform set_config('pgflow.gated_flows', '', true);
  if current_setting('transaction_isolation') <> 'read committed' then
    return null;
  end if;
  for v_flow in select f from unnest(v_flows) f order by f collate "C" loop
    perform pgflow._admit_tasks(v_flow);
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
              then pgflow._note_gated_task(new.flow_slug)
              else false end)
  execute function pgflow._admit_gated_tasks();

-- ---- sql/schema/functions/limits/_admit_waiting_tasks.sql
-- The sweep of concurrency limits: admits the held tasks of every limited flow that has room.
-- A commit normally admits them (_admit_gated_tasks); this catches what no commit did:
-- a task an admission skipped because another transaction held it locked and then rolled
-- back, and the tasks a REPEATABLE READ or SERIALIZABLE transaction queued or freed (it does
-- not admit). A gate another transaction holds is skipped: that one is admitting. Does
-- nothing outside READ COMMITTED.
-- Locks: gate rows, held task rows (neither waited for) -> their queue rows.
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
    order by g.flow_slug collate "C"
  loop
    perform pgflow._admit_tasks(v_flow, false);
  end loop;
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
    select ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name,
           s.concurrency_limited
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'started'
    order by ss.step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay,
                                       v_step.concurrency_limited);
  end loop;

  -- With its root steps started, a run with steps has nothing else ready and cannot be done
  -- (every other step waits for a dependency): _advance_run would find nothing to do.
  if not (v_roots_start and v_step_count > 0) then
    perform pgflow._advance_run(v_run.run_id);
  end if;
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;

-- ---- sql/schema/functions/runtime/retry_run.sql
-- Starts a new run of a failed (or cancelled) run's concrete flow version with the same input,
-- linked to it by restart_of_run_id (and its priority, since 0018: set_run_priority), and
-- returns the new run's id. `new_run_id` (a UUID the
-- caller chooses) makes the call safe to repeat: a second retry with it fails with 23505
-- instead of starting twice. Refused (55000) for a run that is still started or completed; an
-- unknown run is P0002. The original run is left as it is. SECURITY DEFINER: only granted
-- roles may call it.
-- Locks: the original run FOR SHARE (it cannot be resumed meanwhile); then the new run's rows,
-- as start_flow_by_slug.
-- Called by: Client::retry_run, `pgflow run retry`; SQL users.
create or replace function pgflow.retry_run(run_id uuid, new_run_id uuid default null) returns uuid
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_new uuid;
begin
  v_run := pgflow._lock_run_for_control(retry_run.run_id, 'retried', p_for_share => true);
  select r.run_id into v_new from pgflow.start_flow_by_slug(v_run.flow_slug, v_run.input, retry_run.new_run_id) r;
  update pgflow.runs r set restart_of_run_id = v_run.run_id where r.run_id = v_new;
  perform pgflow._set_run_priority(v_new, rp.priority)
  from pgflow.run_priorities rp where rp.run_id = v_run.run_id;
  return v_new;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.retry_run(uuid, uuid) from public;

-- ---- sql/schema/functions/runtime/set_run_priority.sql
-- Sets a run's priority (default 0; higher first, any int): the order in which the held tasks
-- of limited flows are admitted (docs/flow-control.md, "Priorities"). It applies to the run's
-- waiting tasks at once and to every task the run queues later; a retry (retry_run) keeps it.
-- In the transaction that starts the run it is a start option: the run's first tasks are
-- admitted at that commit, already in its order. Tasks of flows without a limit are admitted
-- when queued, so a priority does not reorder them. Returns nothing; an unknown run is P0002.
-- SECURITY DEFINER: only granted roles may call it.
-- Locks: the run FOR UPDATE (the same lock its steps are started under) -> its priority row ->
-- its tasks.
-- Called by: Client::set_run_priority / Transaction::set_run_priority, `pgflow start
-- --priority`, `pgflow run priority`; SQL users.
create or replace function pgflow.set_run_priority(run_id uuid, priority int) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if set_run_priority.priority is null then
    raise exception 'set_run_priority(): priority must not be NULL (0 is the default)'
      using errcode = 'null_value_not_allowed';
  end if;
  perform pgflow._lock_run_for_control(set_run_priority.run_id);
  perform pgflow._set_run_priority(set_run_priority.run_id, set_run_priority.priority);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.set_run_priority(uuid, int) from public;

-- The body of set_run_priority, for a run the caller holds: its row of run_priorities (none
-- for 0) and the priority of its tasks a limit applies to.
-- Called by: set_run_priority, retry_run (the new run takes the old one's).
create or replace function pgflow._set_run_priority(p_run_id uuid, p_priority int) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  if p_priority = 0 then
    delete from pgflow.run_priorities rp where rp.run_id = p_run_id;
  else
    insert into pgflow.run_priorities (run_id, priority) values (p_run_id, p_priority)
    on conflict (run_id) do update set priority = excluded.priority;
  end if;
  update pgflow.step_tasks t set priority = p_priority
  where t.run_id = p_run_id and t.gate is not null and t.priority is distinct from p_priority;
end;
$$;

-- ---- sql/schema/functions/runtime/resume_run.sql
-- Continues a failed (or cancelled) run where it stopped, in one transaction: completed steps
-- and tasks keep their outputs; every failed or cancelled task of a started or failed step is
-- queued again with fresh attempts and a new message (visible at once, or held for admission
-- when a concurrency limit applies to it, since 0018); failed steps with tasks
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
      gate = case when t.gate is not null then 'held' end,
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

  -- New messages, one batch per task queue snapshot (and per gate: a task a concurrency limit
  -- applies to waits held again, admitted at commit); send_batch returns ids in message order.
  for v_batch in
    select t.queue_name, t.gate is not null as held,
           array_agg(t.step_slug order by t.step_slug, t.task_index) as slugs,
           array_agg(t.task_index order by t.step_slug, t.task_index) as indexes
    from pgflow.step_tasks t
    where t.run_id = v_run.run_id and t.status = 'queued' and t.message_id is null
    group by t.queue_name, t.gate is not null
    order by t.queue_name, t.gate is not null
  loop
    update pgflow.step_tasks t set message_id = m.msg_id
    from pgmq.send_batch(
           v_batch.queue_name,
           array(select jsonb_build_object('flow_slug', v_run.flow_slug, 'run_id', v_run.run_id,
                                           'step_slug', x.step_slug, 'task_index', x.task_index)
                 from unnest(v_batch.slugs, v_batch.indexes) with ordinality x(step_slug, task_index, n)
                 order by x.n),
           null::jsonb[],
           case when v_batch.held then 'infinity'::timestamptz else clock_timestamp() end) with ordinality as m(msg_id, n)
    where t.run_id = v_run.run_id and t.step_slug = v_batch.slugs[m.n] and t.task_index = v_batch.indexes[m.n];
    if not v_batch.held then
      perform pgflow._announce_work(v_batch.queue_name);
    end if;
  end loop;

  perform pgflow._advance_run(v_run.run_id);
  select * into v_run from pgflow.runs r where r.run_id = v_run.run_id;
  return v_run;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.resume_run(uuid) from public;

-- ---- sql/schema/functions/runtime/start_ready_steps.sql
-- Starts every ready step with a known, positive task count (in step_slug order), and gives each
-- its tasks and messages (_enqueue_step_tasks).
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
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name,
           s.concurrency_limited
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay,
                                       v_step.concurrency_limited);
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
-- first (the task carries its run's priority: set_run_priority).
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
begin
  perform pgflow._emit_step_event(p_state);

  -- send_batch returns the ids in message order, so ordinality pairs id and task index.
  insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name,
                                 gate, priority)
  select p_run.flow_slug, p_run.run_id, p_state.step_slug, (m.n - 1)::int, m.msg_id, p_queue_name,
         case when p_limited then 'held' end,
         case when p_limited then coalesce((select rp.priority from pgflow.run_priorities rp
                                            where rp.run_id = p_run.run_id), 0) end
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
-- leaves a held task's message invisible (a concurrency limit's waiting task, since 0018),
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
-- 3c'. hold, 3d. archive; 4. one row per message.
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
  v_held bigint[];
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

-- ---- sql/schema/functions/claims/_classify_claim_batch.sql
-- Classifies every message of a claim batch, changing nothing. Each message is looked up by
-- (queue_name, message_id); its body is read only when no task has that identity. The first
-- rule that applies decides:
--   fatal    its task belongs to another flow, or to another step than the claim's (wrong route)
--   held     its task waits for a slot under a concurrency limit (since 0018: its message is
--            invisible, so only a caller that names it without reading it gets here)
--   claim    its task is queued in a started step of a started run
--   fatal    its task is queued but its run or step is not started (inconsistent state)
--   defer    its task is already running (deadline: when stall recovery would take it)
--   archive  its task is finished or can never run
--   gone     no such message and no task
--   fatal    the body carries a pgflow task address (flow_slug, run_id, step_slug or
--            task_index) but no task has this identity: pgflow work this worker cannot judge
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
      (9, jsonb_typeof(b.message) = 'object'
          and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index'],
          'fatal', 'it looks like pgflow work but no task has this (queue, message id)'),
      (10, true, 'archive', 'foreign message without a pgflow task address')
    ) as v(rank, applies, class, reason)
    where v.applies
    order by v.rank
    limit 1) rule;
  return v_items;
end;
$$;

-- ---- sql/schema/functions/claims/_refuse_claim_batch.sql
-- The fatal outcome of a claim: every message of the batch is made visible again (but a held
-- task's: it waits for its admission, since 0018), the worker's
-- function is paused (pgflow.worker_functions; resume_worker_function lifts it), and one row per
-- message is returned: `fatal` with the reason for each unsupported message, `reset` for the
-- others. Nothing is claimed or archived, and nothing is raised, so the reset and the pause
-- commit with the claim's transaction.
-- Locks: the queue rows of the batch; the worker_functions row (_pause_worker_function).
-- Called by: claim_tasks.
create or replace function pgflow._refuse_claim_batch(p_queue_name text, p_function_name text,
                                                      p_items pgflow._claim_item[])
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow.set_vt_batch(p_queue_name,
                              array(select c.msg_id from unnest(p_items) c where c.class <> 'held' order by c.msg_id),
                              array(select 0 from unnest(p_items) c where c.class <> 'held'));
  perform pgflow._pause_worker_function(p_function_name,
    format('fatal claim on queue "%s": unsupported message(s) %s', p_queue_name,
           (select string_agg(c.msg_id::text, ', ' order by c.msg_id)
            from unnest(p_items) c where c.class = 'fatal')));
  return query
  select case when c.class in ('fatal', 'held') then c.class else 'reset' end, p_queue_name, c.msg_id,
         null::text, null::uuid, null::text, null::int, null::int, null::jsonb, null::jsonb,
         c.reason, null::int
  from unnest(p_items) c order by c.msg_id;
end;
$$;

-- ---- sql/schema/functions/maintenance/requeue_stalled_tasks.sql
-- Recovers tasks whose worker vanished: started longer ago than the step's effective timeout
-- + 30 s, in started steps of started runs. Up to 3 times (while attempts remain) the task is
-- requeued and its message made visible at once; after that it is marked permanently stalled
-- and fails as exhausted, so when_exhausted decides and the run can finish. Runs busy with
-- another state change are skipped (SKIP LOCKED) and picked up on the next call. Only tasks
-- whose queue is their step's route are touched (a task row is never trusted to name a queue).
-- One pass at a time: a call while another pass holds the row 'stall_recovery' of pgflow.locks
-- returns NULL at once (skipped; before schema 0012 this was an advisory lock any login could
-- hold); a pass records its end in that row's last_completed_at. Returns the number of tasks
-- requeued. Each pass also admits held tasks of limited flows that have room
-- (_admit_waiting_tasks, since 0018). SECURITY DEFINER: only granted roles may call it.
-- Locks: the 'stall_recovery' row (SKIP LOCKED) -> per candidate, run FOR UPDATE SKIP LOCKED ->
-- task FOR UPDATE -> messages; then gate rows and held tasks, neither waited for (SKIP LOCKED).
-- Called by: live C++ workers (which warn when their calls keep being skipped), or pg_cron (see
-- setup_requeue_stalled_tasks_cron).
create or replace function pgflow.requeue_stalled_tasks() returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_candidate record;
  v_task pgflow.step_tasks;
  v_requeued int := 0;
begin
  perform 1 from pgflow.locks l where l.lock_name = 'stall_recovery' for update skip locked;
  if not found then
    return null;
  end if;
  for v_candidate in
    select t.run_id, t.step_slug, t.task_index,
           coalesce(s.opt_timeout, f.opt_timeout) as timeout,
           coalesce(s.opt_max_attempts, f.opt_max_attempts) as max_attempts
    from pgflow.step_tasks t
    join pgflow.runs r on r.run_id = t.run_id
    join pgflow.step_states ss on ss.run_id = t.run_id and ss.step_slug = t.step_slug
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
                       and s.queue_name = t.queue_name
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
  -- Held tasks a commit could not admit (concurrency limits, since 0018).
  perform pgflow._admit_waiting_tasks();
  update pgflow.locks l set last_completed_at = clock_timestamp() where l.lock_name = 'stall_recovery';
  return v_requeued;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.requeue_stalled_tasks() from public;

-- [migration-only: keep grants]
do $$
begin
  if current_setting('pgflow.migration_grantees') <> '' then
    execute 'grant execute on function pgflow.ensure_flow_compiled(text, jsonb, int, text, jsonb, text, jsonb) to '
            || current_setting('pgflow.migration_grantees');
  end if;
end;
$$;
-- [end migration-only]
