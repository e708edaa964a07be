-- pgflow SQL core, 0005: stable flow aliases (seed 004_3e8b2d0feabfcbce, DeployedFlow).
--
-- A concrete flow (flow_slug: an immutable version, what runs, tasks, queues and events carry)
-- now belongs to one alias, a stable dispatch name with exactly one active version:
--
--   * flows.flow_alias (not null, immutable membership) and pgflow.flow_aliases (one row per
--     alias: its active version). Existing flows become self-aliases (alias = slug), each
--     active, in this transaction; no version family is inferred from slug suffixes.
--   * start_flow / start_flow_with_states resolve an alias (argument name flow_slug kept, so
--     every existing call keeps working through the self-aliases); start_flow_by_alias names
--     it; start_flow_by_slug / start_flow_with_states_by_slug pin a concrete version. A
--     missing alias fails, never falling back to a concrete slug.
--   * ensure_flow_compiled(..., flow_alias) deploys a version under an alias at worker
--     startup: membership, then compilation, then the active pointer only for an alias without
--     one (so concurrent V2/V3 deployments cannot switch it); local recompilation keeps the
--     flow's identity row, membership and activation.
--   * activate_flow_version(flow_alias, flow_slug, expected_current_flow_slug): compare-and-swap.
--   * delete_flow_and_data: an inactive version may go; the active one only as the sole version
--     of its alias (taking the alias with it).
--   * Worker protocol 4 (workers older than this library are refused at startup).
--
-- Applied by the pgflow migration runner in one transaction. It takes ACCESS EXCLUSIVE on
-- pgflow.flows first (producers' start_flow and workers' compilations wait for it; claims and
-- results do not read flows' new column), with a bounded wait: lock_timeout 10 s, after which it
-- fails with nothing changed; run it again. Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
lock table pgflow.flows in access exclusive mode;
-- [end migration-only]

-- [migration-only: preflight]
do $$
begin
  if to_regclass('pgflow.flow_aliases') is not null
     or exists (select 1 from pg_catalog.pg_attribute a
                where a.attrelid = 'pgflow.flows'::regclass and a.attname = 'flow_alias' and not a.attisdropped) then
    raise exception 'pgflow 0005 (flow aliases) cannot upgrade this database: pgflow.flow_aliases or pgflow.flows.flow_alias exists already (made outside pgflow''s migrations?). Nothing was changed; remove it or restore the schema of version 0004'
      using errcode = 'duplicate_object';
  end if;
end;
$$;
-- [end migration-only]

alter table pgflow.flows add column flow_alias text;
update pgflow.flows set flow_alias = flow_slug;  -- [migration-only: backfill]
alter table pgflow.flows alter column flow_alias set not null;
alter table pgflow.flows add constraint flow_alias_is_valid check (pgflow.is_valid_slug(flow_alias));
alter table pgflow.flows add constraint flows_flow_slug_flow_alias_key unique (flow_slug, flow_alias);
create index idx_flows_flow_alias on pgflow.flows (flow_alias);

create table pgflow.flow_aliases (
  flow_alias text primary key,
  flow_slug  text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (flow_slug, flow_alias) references pgflow.flows (flow_slug, flow_alias)
);
create unique index flow_aliases_flow_alias_lower_key on pgflow.flow_aliases (lower(flow_alias));

-- [migration-only: backfill]
-- Every existing flow is the active version of its own alias.
insert into pgflow.flow_aliases (flow_alias, flow_slug, created_at)
select f.flow_slug, f.flow_slug, f.created_at from pgflow.flows f;
-- [end migration-only]
set local check_function_bodies = off;

drop function pgflow._create_flow_from_shape(text, jsonb, text);

drop function pgflow.ensure_flow_compiled(text, jsonb, integer, text, jsonb);

-- ---- sql/schema/functions/definitions/_lock_flow_alias.sql
-- Serialises changes of one alias: its membership checks, its active pointer (first member,
-- compare-and-swap activation) and the deletion of its members. Lock order position 0: taken
-- before the concrete flow's definition lock (sql/schema/README.md). Keyed by the lower-cased
-- alias, in its own advisory namespace (2), so case aliases queue behind each other.
-- Called by: _create_flow, ensure_flow_compiled, activate_flow_version, delete_flow_and_data.
create or replace function pgflow._lock_flow_alias(flow_alias text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_advisory_xact_lock(2, hashtext(lower(flow_alias)))
$$;

-- ---- sql/schema/functions/definitions/create_flow.sql
-- Upstream's building block: creates only the flow definition, as its own alias (see
-- _create_flow). Idempotent for an existing flow, whatever its alias.
-- Locks: see _create_flow.
-- Called by: SQL users building a flow by hand.
create or replace function pgflow.create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null
) returns pgflow.flows
language sql volatile
set search_path = ''
as $$
  select * from pgflow._create_flow(create_flow.flow_slug, create_flow.max_attempts,
                                    create_flow.base_delay, create_flow.timeout)
$$;

-- ---- sql/schema/functions/definitions/_create_flow.sql
-- Creates only the flow definition (no queue: the compiler and add_step provision it), as a
-- member of alias `flow_alias` (NULL: the flow's own slug, a self-alias). The first member of
-- an alias becomes its active version. Idempotent for an existing flow (options unchanged); a
-- different alias for it is an error (membership is immutable). Rejects invalid and too long
-- slugs, case-only duplicates of another flow or alias, and a slug whose queue name PGMQ
-- already has.
-- Locks: the alias lock, then the flow's definition lock.
-- Called by: create_flow, _create_flow_from_shape.
create or replace function pgflow._create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null,
  flow_alias text default null
) returns pgflow.flows
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_problem text := pgflow._slug_problem(_create_flow.flow_slug);
  v_alias text := coalesce(_create_flow.flow_alias, _create_flow.flow_slug);
  v_other text;
begin
  -- Lock order: the alias, then the concrete flow. An existing flow's alias is immutable, so it
  -- can be read before its lock.
  select f.flow_alias into v_other from pgflow.flows f where f.flow_slug = _create_flow.flow_slug;
  perform pgflow._lock_flow_alias(coalesce(v_other, v_alias));
  perform pgflow._lock_flow_definition(_create_flow.flow_slug);
  select * into v_flow from pgflow.flows f where f.flow_slug = _create_flow.flow_slug;
  if found then
    if _create_flow.flow_alias is not null and v_flow.flow_alias <> _create_flow.flow_alias then
      raise exception 'Flow "%" belongs to alias "%"; it cannot move to alias "%" (alias membership is immutable: deploy a new flow slug under that alias)',
        v_flow.flow_slug, v_flow.flow_alias, _create_flow.flow_alias
        using errcode = 'object_not_in_prerequisite_state';
    end if;
    return v_flow;
  end if;

  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', _create_flow.flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(_create_flow.flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      _create_flow.flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  select f.flow_slug into v_other from pgflow.flows f
  where lower(f.flow_slug) = lower(_create_flow.flow_slug);
  if found then
    raise exception 'Flow slug "%" differs only in case from existing flow "%"; flow slugs must be unique ignoring case',
      _create_flow.flow_slug, v_other using errcode = 'unique_violation';
  end if;
  select m.queue_name into v_other from pgmq.meta m
  where lower(m.queue_name) = lower(_create_flow.flow_slug);
  if found then
    raise exception 'PGMQ queue "%" already exists; pgflow never adopts an existing queue for a new flow "%". Drop or rename that queue, or use another flow slug',
      v_other, _create_flow.flow_slug using errcode = 'duplicate_object';
  end if;

  v_problem := pgflow._slug_problem(v_alias);
  if v_problem is not null then
    raise exception 'Invalid flow alias "%": it %', v_alias, v_problem
      using errcode = 'check_violation', constraint = 'flow_alias_is_valid';
  end if;
  select a.flow_alias into v_other from pgflow.flow_aliases a
  where lower(a.flow_alias) = lower(v_alias) and a.flow_alias <> v_alias;
  if found then
    raise exception 'Flow alias "%" differs only in case from existing alias "%"; aliases must be unique ignoring case',
      v_alias, v_other using errcode = 'unique_violation';
  end if;

  insert into pgflow.flows (flow_slug, opt_max_attempts, opt_base_delay, opt_timeout, flow_alias)
  values (_create_flow.flow_slug, coalesce(max_attempts, 3), coalesce(base_delay, 5),
          coalesce(timeout, 60), v_alias)
  returning * into v_flow;
  -- The first member of an alias becomes its active version; later members stay inactive
  -- until activate_flow_version.
  insert into pgflow.flow_aliases (flow_alias, flow_slug) values (v_alias, v_flow.flow_slug)
  on conflict (flow_alias) do nothing;
  return v_flow;
end;
$$;

-- ---- sql/schema/functions/definitions/_create_flow_from_shape.sql
-- The complete compiler: preflight the whole definition (and, in queue mode `step`, every
-- private queue) before anything is written, persist the flow with its queue mode as a member
-- of `p_flow_alias` (NULL: its own slug), provision its queues - the generated queue
-- lower(flow_slug) in mode `flow` (even for a flow without steps), exactly the step queues and
-- no default queue in mode `step` - then create the steps with their route.
-- A flow row that exists already is a local recompilation (ensure_flow_compiled emptied it with
-- _delete_flow_contents): its identity and alias membership are kept, its options and queue
-- mode replaced.
-- Locks: the caller holds the alias lock and the flow's definition lock (_create_flow and
-- _add_step take them again).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb,
                                                          p_queue_mode text default 'flow',
                                                          p_flow_alias text default null)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_step jsonb;
  v_route text[];
  v_queue text;
  i int := 0;
begin
  perform pgflow._preflight_flow_shape(p_flow_slug, p_shape, p_queue_mode);
  v_route := array(select r.queue_name from pgflow._flow_route(p_flow_slug, p_shape, p_queue_mode) r
                   order by r.step_index);
  if p_queue_mode = 'step' then
    perform pgflow._preflight_step_queues(p_flow_slug, v_route);
  end if;
  if exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug) then
    -- Recompiling: the same identity, the new definition's options (created_at: the queues of
    -- this definition are created now, see _provision_flow_queue).
    update pgflow.flows f
    set opt_max_attempts = coalesce((p_shape->'options'->>'maxAttempts')::int, 3),
        opt_base_delay = coalesce((p_shape->'options'->>'baseDelay')::int, 5),
        opt_timeout = coalesce((p_shape->'options'->>'timeout')::int, 60),
        created_at = now()
    where f.flow_slug = p_flow_slug;
  else
    perform pgflow._create_flow(
      p_flow_slug,
      (p_shape->'options'->>'maxAttempts')::int,
      (p_shape->'options'->>'baseDelay')::int,
      (p_shape->'options'->>'timeout')::int,
      p_flow_alias);
  end if;
  update pgflow.flows f set queue_mode = p_queue_mode
  where f.flow_slug = p_flow_slug and f.queue_mode <> p_queue_mode;
  if p_queue_mode = 'step' then
    foreach v_queue in array v_route loop
      perform pgflow._create_queue(v_queue);
    end loop;
  else
    perform pgflow._provision_flow_queue(p_flow_slug);
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    i := i + 1;
    perform pgflow._add_step(
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
      when_exhausted => coalesce(v_step->>'whenExhausted', 'fail'),
      queue_name => case when p_queue_mode = 'step' then v_route[i] end);
  end loop;
end;
$$;

-- ---- sql/schema/functions/definitions/delete_flow_and_data.sql
-- Deletes a flow with all its runs and its private queues, in one transaction: the alias rules
-- first, then _delete_flow_contents (seed 000's steps 1-4), then the flow row last (step 5).
-- Alias rules (seed 004): an inactive version can be deleted; the active version of an alias
-- that has other members cannot (activate another version first); the sole version of an
-- alias is deleted together with the alias. Destructive: for operators and development.
-- Locks: alias lock -> definition lock -> flow row -> alias row -> runs -> queues.
-- Called by: operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_active text;
  v_members text[];
begin
  -- An existing flow's alias is immutable, so it can be read before its lock.
  select * into v_flow from pgflow.flows f where f.flow_slug = p_flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  perform pgflow._lock_flow_alias(v_flow.flow_alias);
  perform pgflow._lock_flow_definition(p_flow_slug);
  select a.flow_slug into v_active from pgflow.flow_aliases a
  where a.flow_alias = v_flow.flow_alias for update;
  if v_active = p_flow_slug then
    v_members := array(select f.flow_slug from pgflow.flows f
                       where f.flow_alias = v_flow.flow_alias and f.flow_slug <> p_flow_slug
                       order by f.flow_slug);
    if cardinality(v_members) > 0 then
      raise exception 'Flow "%" is the active version of alias "%", which has other versions (%); activate one of them first (pgflow.activate_flow_version), then delete this one',
        p_flow_slug, v_flow.flow_alias, array_to_string(v_members, ', ')
        using errcode = 'object_in_use';
    end if;
  end if;

  perform pgflow._delete_flow_contents(p_flow_slug);
  if v_active = p_flow_slug then
    delete from pgflow.flow_aliases a where a.flow_alias = v_flow.flow_alias;  -- its sole version
  end if;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
end;
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
set search_path = ''
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

  select t.queue_name into v_stray from pgflow.step_tasks t
  where t.flow_slug = p_flow_slug and not t.queue_name = any(v_route) limit 1;
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
  delete from pgflow.step_tasks t where t.flow_slug = p_flow_slug;
  delete from pgflow.step_states s where s.flow_slug = p_flow_slug;
  delete from pgflow.runs r where r.flow_slug = p_flow_slug;
  delete from pgflow.deps d where d.flow_slug = p_flow_slug;
  delete from pgflow.steps s where s.flow_slug = p_flow_slug;
  foreach v_queue in array v_spellings loop
    perform pgmq.drop_queue(v_queue);
  end loop;
end;
$$;

-- ---- sql/schema/functions/definitions/ensure_flow_compiled.sql
-- Startup compilation, the only compile path since upstream 0.16.0.
--
-- ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map, flow_alias):
-- startup deployment for workers of this database's protocol. The worker's deployment is its
-- shape plus its queue mode (`flow` | `step`, upstream 0.17's contract), optionally the route
-- map it derived ([{stepSlug, queueName}], which must equal what _flow_route derives), and the
-- alias it belongs to (NULL: its own slug). In one transaction, under the alias lock and then
-- the flow's definition lock (seed 004):
--   1. alias membership: a new flow joins `flow_alias`; an existing one must already belong to
--      it (membership is immutable: any other alias is an error, even locally);
--   2. compile or verify: creates a missing flow (compiled), verifies an existing one - shape,
--      queue mode and route, and that its queues are present and owned (verified) -,
--      recompiles it on a local database keeping its identity, alias membership and activation
--      (recompiled), or reports the differences and changes nothing (mismatch). A different
--      queue mode or route is a mismatch like a different shape; mismatchKind says which
--      ('shape' when the shape differs, else 'routing');
--   3. activation: only an alias without an active version gets one (this flow: activated);
--      otherwise nothing changes (active: this flow is the active version; inactive: another
--      one is). A new version never replaces the active one: activate_flow_version does.
-- Returns {status, differences, mismatchKind, queue_mode, routes (the persisted route map),
-- queue_name (the flow's queue in mode `flow`), flow_alias, activation, active_flow_slug}.
--
-- ensure_flow_compiled(flow_slug, shape): upstream 0.16.0's signature. Workers of 0.16.0 call
-- it first; it refuses them with the protocol error, so they stop before registering.
--
-- Locks: the alias lock, the flow's definition lock (then whatever compilation takes).
-- Called by: EdgeWorker startup (src/worker/worker.cc).
create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb) returns jsonb
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._require_worker_protocol(null);
  return null;
end;
$$;

create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb, worker_protocol int,
                                                       queue_mode text default 'flow',
                                                       route_map jsonb default null,
                                                       flow_alias text default null)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_mode text := coalesce(ensure_flow_compiled.queue_mode, 'flow');
  v_alias text := coalesce(ensure_flow_compiled.flow_alias, ensure_flow_compiled.flow_slug);
  v_route jsonb;
  v_flow pgflow.flows;
  v_active text;
  v_activation text;
  v_shape_diffs text[] := '{}';
  v_route_diffs text[] := '{}';
  v_status text;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  perform pgflow._validate_flow_shape(shape);
  if v_mode not in ('flow', 'step') then
    raise exception 'Invalid queue mode "%" for flow "%": expected "flow" or "step"', v_mode,
      ensure_flow_compiled.flow_slug using errcode = 'invalid_parameter_value';
  end if;
  if pgflow._slug_problem(v_alias) is not null then
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
    v_status := 'compiled';
  else
    v_shape_diffs := pgflow._compare_flow_shapes(shape, pgflow._get_flow_shape(ensure_flow_compiled.flow_slug));
    v_route_diffs := pgflow._compare_flow_routes(v_mode, v_route, v_flow.queue_mode,
                                                 pgflow._get_flow_route(ensure_flow_compiled.flow_slug));
    if cardinality(v_shape_diffs) + cardinality(v_route_diffs) = 0 then
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
      -- The identity row stays: its alias membership and activation survive.
      perform pgflow._delete_flow_contents(ensure_flow_compiled.flow_slug);
      perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape, v_mode, v_alias);
      v_status := 'recompiled';
    else
      v_status := 'mismatch';
    end if;
  end if;

  -- 3. Activation: only an alias without an active version gets one.
  if v_status = 'mismatch' then
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'active' else 'inactive' end;
  elsif v_active is null then
    insert into pgflow.flow_aliases (flow_alias, flow_slug) values (v_alias, ensure_flow_compiled.flow_slug)
    on conflict (flow_alias) do nothing;  -- (_create_flow may have done it already)
    v_active := ensure_flow_compiled.flow_slug;
    v_activation := 'activated';
  else
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'active' else 'inactive' end;
  end if;

  select * into v_flow from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug;
  return jsonb_build_object(
    'status', v_status,
    'differences', to_jsonb(v_shape_diffs || v_route_diffs),
    'mismatchKind', case when v_status not in ('mismatch', 'recompiled') then null
                         when cardinality(v_shape_diffs) > 0 then 'shape' else 'routing' end,
    'queue_mode', v_flow.queue_mode,
    'routes', pgflow._get_flow_route(ensure_flow_compiled.flow_slug),
    'queue_name', case when v_flow.queue_mode = 'flow' then lower(ensure_flow_compiled.flow_slug) end,
    'flow_alias', v_alias,
    'activation', v_activation,
    'active_flow_slug', v_active);
end;
$$;

-- ---- sql/schema/functions/definitions/activate_flow_version.sql
-- Makes `flow_slug` the active version of `flow_alias`, by compare-and-swap: only if the alias
-- still points to `expected_current_flow_slug` (NULL: only if the alias has no active version
-- yet). A conflict changes nothing and names the actual current version (SQLSTATE 55000), so a
-- rollout or a rollback never overwrites a change it did not see. The flow must be a member of
-- the alias. Returns the alias row.
-- Locks: the alias lock, then the alias row.
-- Called by: operators (pgflow activate, Client::activate_flow_version).
create or replace function pgflow.activate_flow_version(flow_alias text, flow_slug text,
                                                        expected_current_flow_slug text)
returns pgflow.flow_aliases
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_member text;
  v_current pgflow.flow_aliases;
  v_row pgflow.flow_aliases;
begin
  perform pgflow._lock_flow_alias(activate_flow_version.flow_alias);
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
    raise exception 'Alias "%" points to %, not to the expected %; nothing changed (read the current version and decide again)',
      activate_flow_version.flow_alias,
      coalesce('"' || v_current.flow_slug || '"', 'no version'),
      coalesce('"' || expected_current_flow_slug || '"', 'no version')
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
  return v_row;
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow.sql
-- Starts a run of the active version of alias `flow_slug` (upstream's argument name; every flow
-- is a member of an alias, its own slug unless deployed under another one). Alias resolution and
-- the start happen in this one call; the run carries the concrete slug. A missing alias fails:
-- there is no fallback to a concrete slug (start_flow_by_slug pins one).
-- Called by: clients; start_flow_by_alias; SQL users and upstream tooling.
create or replace function pgflow.start_flow(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile  -- plpgsql, not sql: its plan is cached (producers call it often)
set search_path = ''
as $$
begin
  return query select * from pgflow.start_flow_by_slug(pgflow._resolve_flow_alias(start_flow.flow_slug),
                                                       start_flow.input, start_flow.run_id);
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow_by_alias.sql
-- start_flow with the alias named as such: starts a run of the active version of `flow_alias`.
-- Called by: SQL users (Client::start_flow_by_alias goes through start_flow_with_states).
create or replace function pgflow.start_flow_by_alias(flow_alias text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language sql volatile
set search_path = ''
as $$
  select * from pgflow.start_flow(start_flow_by_alias.flow_alias, start_flow_by_alias.input, start_flow_by_alias.run_id)
$$;

-- ---- sql/schema/functions/runtime/start_flow_by_slug.sql
-- Starts a run of the concrete flow `flow_slug` (a pinned version, whatever its alias's active
-- version is): checks the input (a flow with a root map needs an array), creates the run and one
-- step state per step, publishes run:started, then advances the run (conditions, taskless
-- steps, ready steps get their tasks and messages; a run without tasks completes at once).
-- Locks: the new run's rows only (nobody else can see them before commit); queue rows last.
-- Called by: start_flow (after resolving the alias), start_flow_with_states_by_slug (and so
-- Client::start_flow_by_slug); SQL users.
create or replace function pgflow.start_flow_by_slug(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_has_root_map boolean;
begin
  if not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow_by_slug.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow_by_slug.flow_slug using errcode = 'no_data_found';
  end if;
  select exists (select 1 from pgflow.steps s
                 where s.flow_slug = start_flow_by_slug.flow_slug and s.step_type = 'map' and s.deps_count = 0)
  into v_has_root_map;
  if v_has_root_map and start_flow_by_slug.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow_by_slug.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow_by_slug.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow_by_slug.flow_slug, jsonb_typeof(start_flow_by_slug.input);
  elsif start_flow_by_slug.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow_by_slug.run_id, gen_random_uuid()), start_flow_by_slug.flow_slug, start_flow_by_slug.input,
          (select count(*) from pgflow.steps s where s.flow_slug = start_flow_by_slug.flow_slug))
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

  perform pgflow._emit_run_event(v_run);

  perform pgflow._advance_run(v_run.run_id);
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;

-- ---- sql/schema/functions/runtime/_resolve_flow_alias.sql
-- The active concrete version of an alias, or an error naming the alias (P0002): a missing
-- alias never falls back to a flow of that slug. The hint points at near misses: an alias that
-- differs only in case, or a flow with that slug under another alias.
-- Locks: none (reads the committed pointer; activate_flow_version swaps it atomically).
-- Called by: start_flow (and so start_flow_by_alias), start_flow_with_states.
create or replace function pgflow._resolve_flow_alias(p_flow_alias text) returns text
language plpgsql stable
set search_path = ''
as $$
declare
  v_slug text;
  v_near text;
begin
  select a.flow_slug into v_slug from pgflow.flow_aliases a where a.flow_alias = p_flow_alias;
  if found then
    return v_slug;
  end if;
  select coalesce(
           (select format('alias "%s" differs only in case', a.flow_alias) from pgflow.flow_aliases a
            where lower(a.flow_alias) = lower(p_flow_alias)),
           (select format('flow "%s" exists under alias "%s": start it by slug (start_flow_by_slug) or by that alias',
                          f.flow_slug, f.flow_alias)
            from pgflow.flows f where f.flow_slug = p_flow_alias))
  into v_near;
  raise exception 'Flow alias "%" does not exist%', p_flow_alias, coalesce('; ' || v_near, '')
    using errcode = 'no_data_found';
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow_with_states.sql
-- start_flow (of the active version of alias `flow_slug`), then the new run as
-- get_run_with_states returns it. SECURITY DEFINER (upstream's client calls it through RPC):
-- only granted roles may call it.
-- Called by: Client::start_flow; upstream clients.
create or replace function pgflow.start_flow_with_states(flow_slug text, input jsonb, run_id uuid default null)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
begin
  return pgflow.start_flow_with_states_by_slug(pgflow._resolve_flow_alias(start_flow_with_states.flow_slug),
                                               start_flow_with_states.input, start_flow_with_states.run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.start_flow_with_states(text, jsonb, uuid) from public;

-- ---- sql/schema/functions/runtime/start_flow_with_states_by_slug.sql
-- start_flow_by_slug (a pinned concrete version), then the new run as get_run_with_states
-- returns it. SECURITY DEFINER, like start_flow_with_states: only granted roles may call it.
-- Called by: Client::start_flow_by_slug, start_flow_with_states (after resolving the alias).
create or replace function pgflow.start_flow_with_states_by_slug(flow_slug text, input jsonb,
                                                                 run_id uuid default null)
returns jsonb
language plpgsql volatile security definer
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run_id uuid;
begin
  select r.run_id into v_run_id
  from pgflow.start_flow_by_slug(start_flow_with_states_by_slug.flow_slug, start_flow_with_states_by_slug.input,
                                 start_flow_with_states_by_slug.run_id) r;
  return pgflow.get_run_with_states(v_run_id);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.start_flow_with_states_by_slug(text, jsonb, uuid) from public;

-- ---- sql/schema/functions/runtime/get_run_with_states.sql
-- {"run": <runs row>, "steps": [<step_states rows in step order>], "flow_alias": <the alias the
-- run's flow belongs to>}, or NULL for an unknown run. The run row carries the concrete slug.
-- SECURITY DEFINER (upstream's client calls it through RPC): only granted roles may call it.
-- Locks: none (reads).
-- Called by: start_flow_with_states, Client::get_run / wait_for_run; upstream clients.
create or replace function pgflow.get_run_with_states(run_id uuid) returns jsonb
language sql stable security definer
set search_path = ''
as $$
  select jsonb_build_object(
    'run', to_jsonb(r),
    'steps', coalesce((
      select jsonb_agg(to_jsonb(ss) order by s.step_index)
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      where ss.run_id = r.run_id), '[]'::jsonb),
    'flow_alias', (select f.flow_alias from pgflow.flows f where f.flow_slug = r.flow_slug))
  from pgflow.runs r
  where r.run_id = get_run_with_states.run_id
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.get_run_with_states(uuid) from public;

-- ---- sql/schema/functions/workers/worker_protocol.sql
-- The worker protocol this database speaks. A worker compares it with its own before doing
-- anything else, and the database refuses any other at compilation and registration.
--   2  queue identity: claim_tasks(queue, flow, ids, worker), register_worker (0002)
--   3  per-step queues: ensure_flow_compiled(..., queue_mode, route_map), claims with a step
--      selector, step workers registered on their step's queue (0004)
--   4  flow aliases: ensure_flow_compiled(..., flow_alias) deploys a version under an alias
--      and reports its activation (0005)
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select 4
$$;
