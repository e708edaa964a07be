-- pgflow SQL core, 0004: private per-step queues (upstream 0.17's withStepQueues contract).
--
-- A flow's queue mode is deployment metadata beside its shape: `flow` (the default: every step's
-- tasks go to the flow's generated queue lower(flow_slug), as before) or `step` (each step has
-- its own private queue lower(flow_slug || '__' || step_slug), or lower(flow_slug || '__' ||
-- step_index) when that is too long, so a huge or slow step cannot starve the others). The route
-- stays steps.queue_name; there is no queue registry.
--
--   * flows.queue_mode ('flow' | 'step', default 'flow'): existing flows stay plain flows;
--     nothing is moved, no queue is created or dropped.
--   * ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map) compiles
--     or verifies shape, queue mode and route; a different mode or route is a mismatch
--     (mismatchKind 'routing'). Step mode provisions exactly the step queues, after one
--     preflight of all of them (ownership, collisions, case aliases).
--   * claim_tasks(queue, flow, ids, worker, step_slug): the exact step selector, required in
--     step mode and refused in flow mode; a task of another step is fatal (wrong route).
--   * register_worker accepts a step's private queue; add_step refuses step-mode flows;
--     deletion drops the private route (the default queue only in flow mode).
--   * Worker protocol 3: workers of protocol 2 are refused at startup (upgrade them with the
--     database; running ones keep working until they restart, the functions they call keep
--     their signatures).
--   * Claims reach tasks and runs by index probes and row addresses, never by joins planned
--     from statistics (a burst of work into a quiet database made each claim scan the queue's
--     tasks).
--
-- Applied by the pgflow migration runner in one transaction. Adding the column takes an
-- ACCESS EXCLUSIVE lock on pgflow.flows for a moment (no table rewrite); the wait for it is
-- bounded, and a lock that cannot be had in time fails the migration with nothing changed.
-- Immutable once released.

-- [migration-only: fence]
set local lock_timeout = '10s';
-- [end migration-only]

alter table pgflow.flows add column queue_mode text not null default 'flow';
alter table pgflow.flows add constraint queue_mode_is_valid check (queue_mode in ('flow', 'step'));

-- claim_tasks updates the tasks it classified by row address (see claim_tasks).
alter type pgflow._claim_item add attribute task tid;
set local check_function_bodies = off;

drop function pgflow._classify_claim_batch(text, text, bigint[]);

drop function pgflow._create_flow_from_shape(text, jsonb);

drop function pgflow._preflight_flow_shape(text, jsonb);

drop function pgflow.claim_tasks(text, text, bigint[], uuid);

drop function pgflow.ensure_flow_compiled(text, jsonb, integer);

-- ---- sql/schema/functions/definitions/_add_step.sql
-- Adds a step routed to `queue_name`, or (NULL) to the flow's generated queue lower(flow_slug),
-- provisioned through the ownership-checked path. Calling it again for an existing step is
-- idempotent when the structure (type, dependencies, patterns, modes) is the same and an error
-- otherwise: it never adds edges to an existing step, so re-calls cannot create cycles or stale
-- deps_count. Runtime options of an existing step stay unchanged (tune them with UPDATE).
-- Locks: the flow's definition lock; then pgmq.meta (queue creation).
-- Called by: add_step; _create_flow_from_shape (with the step's private queue in queue mode
-- `step`, which the compiler provisioned).
create or replace function pgflow._add_step(
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
  when_exhausted text default 'fail',
  queue_name text default null
) returns pgflow.steps
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_type text := coalesce(_add_step.step_type, 'single');
  v_deps text[] := array(select distinct d from unnest(coalesce(deps_slugs, '{}')) d order by d);
  v_existing pgflow.steps;
  v_existing_deps text[];
  v_problem text := pgflow._slug_problem(_add_step.step_slug);
  v_other text;
  v_queue text;
  v_step pgflow.steps;
begin
  if v_type = 'map' and cardinality(v_deps) > 1 then
    raise exception 'Map step "%" can have at most one dependency, but % were provided: %',
      _add_step.step_slug, cardinality(v_deps), array_to_string(v_deps, ', ');
  end if;

  perform pgflow._lock_flow_definition(_add_step.flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = _add_step.flow_slug) then
    raise exception 'Flow "%" does not exist; create it with pgflow.create_flow() first',
      _add_step.flow_slug using errcode = 'foreign_key_violation', constraint = 'steps_flow_slug_fkey';
  end if;

  select * into v_existing from pgflow.steps s
  where s.flow_slug = _add_step.flow_slug and s.step_slug = _add_step.step_slug;
  if found then
    v_existing_deps := array(
      select d.dep_slug from pgflow.deps d
      where d.flow_slug = _add_step.flow_slug and d.step_slug = _add_step.step_slug
      order by d.dep_slug);
    if v_existing.step_type is distinct from v_type
       or v_existing_deps is distinct from v_deps
       or v_existing.required_input_pattern is distinct from _add_step.required_input_pattern
       or v_existing.forbidden_input_pattern is distinct from _add_step.forbidden_input_pattern
       or v_existing.when_unmet is distinct from _add_step.when_unmet
       or v_existing.when_exhausted is distinct from _add_step.when_exhausted then
      raise exception 'Step "%" already exists in flow "%" with a different definition; '
        'flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
        _add_step.step_slug, _add_step.flow_slug
        using errcode = 'unique_violation';
    end if;
    return v_existing;
  end if;

  if v_problem is not null then
    raise exception 'Invalid step slug "%" in flow "%": it %', _add_step.step_slug,
      _add_step.flow_slug, v_problem using errcode = 'check_violation', constraint = 'steps_step_slug_check';
  end if;
  select s.step_slug into v_other from pgflow.steps s
  where s.flow_slug = _add_step.flow_slug and lower(s.step_slug) = lower(_add_step.step_slug);
  if found then
    raise exception 'Step slug "%" differs only in case from step "%" of flow "%"; step slugs must be unique ignoring case',
      _add_step.step_slug, v_other, _add_step.flow_slug using errcode = 'unique_violation';
  end if;

  -- A given queue is the compiler's (already provisioned); otherwise the flow's generated queue.
  v_queue := coalesce(_add_step.queue_name, pgflow._provision_flow_queue(_add_step.flow_slug));

  insert into pgflow.steps (
    flow_slug, step_slug, step_type, step_index, deps_count,
    opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay,
    required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted, queue_name)
  values (
    _add_step.flow_slug, _add_step.step_slug, v_type,
    (select coalesce(max(s.step_index) + 1, 0) from pgflow.steps s
     where s.flow_slug = _add_step.flow_slug),
    cardinality(v_deps),
    max_attempts, base_delay, timeout, start_delay,
    _add_step.required_input_pattern, _add_step.forbidden_input_pattern,
    _add_step.when_unmet, _add_step.when_exhausted, v_queue)
  returning * into v_step;

  insert into pgflow.deps (flow_slug, dep_slug, step_slug)
  select _add_step.flow_slug, d, _add_step.step_slug from unnest(v_deps) d;

  return v_step;
end;
$$;

-- ---- sql/schema/functions/definitions/add_step.sql
-- Upstream's building block: adds a step routed to the flow's generated queue lower(flow_slug)
-- (see _add_step for the rules). A flow in queue mode `step` is compiled whole by its workers
-- (every step's private queue is provisioned with the definition), so add_step refuses it.
-- Locks: the flow's definition lock; then what _add_step takes.
-- Called by: SQL users building a flow by hand.
create or replace function pgflow.add_step(
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
begin
  perform pgflow._lock_flow_definition(add_step.flow_slug);
  if exists (select 1 from pgflow.flows f
             where f.flow_slug = add_step.flow_slug and f.queue_mode = 'step') then
    raise exception 'Flow "%" has one queue per step (queue mode step): its workers compile it whole, so add_step cannot change it. Deploy a new flow version instead',
      add_step.flow_slug using errcode = 'feature_not_supported';
  end if;
  return pgflow._add_step(
    flow_slug => add_step.flow_slug, step_slug => add_step.step_slug, deps_slugs => add_step.deps_slugs,
    max_attempts => add_step.max_attempts, base_delay => add_step.base_delay,
    timeout => add_step.timeout, start_delay => add_step.start_delay, step_type => add_step.step_type,
    required_input_pattern => add_step.required_input_pattern,
    forbidden_input_pattern => add_step.forbidden_input_pattern,
    when_unmet => add_step.when_unmet, when_exhausted => add_step.when_exhausted);
end;
$$;

-- ---- sql/schema/functions/definitions/_flow_route.sql
-- The route a definition gets, derived from its shape and queue mode: for each step, in shape
-- order, the queue its tasks go to. Queue mode `flow`: the flow's generated queue
-- lower(flow_slug) for every step. Queue mode `step`: each step's private queue
-- (_step_queue_name; NULL when the name cannot fit).
-- Called by: ensure_flow_compiled, _create_flow_from_shape, _preflight_flow_shape.
create or replace function pgflow._flow_route(p_flow_slug text, p_shape jsonb, p_queue_mode text)
returns table (step_index int, step_slug text, queue_name text)
language sql immutable
set search_path = ''
as $$
  select (e.n - 1)::int, e.step->>'slug',
         case when p_queue_mode = 'step'
              then pgflow._step_queue_name(p_flow_slug, e.step->>'slug', (e.n - 1)::int)
              else lower(p_flow_slug) end
  from jsonb_array_elements(p_shape->'steps') with ordinality as e(step, n)
  order by e.n
$$;

-- ---- sql/schema/functions/definitions/_get_flow_route.sql
-- A flow's persisted route as upstream's route map: [{"stepSlug", "queueName"}] in step order
-- (steps.queue_name; there is no registry table).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._get_flow_route(p_flow_slug text) returns jsonb
language sql stable
set search_path = ''
as $$
  select coalesce(jsonb_agg(jsonb_build_object('stepSlug', s.step_slug, 'queueName', s.queue_name)
                            order by s.step_index), '[]'::jsonb)
  from pgflow.steps s
  where s.flow_slug = p_flow_slug
$$;

-- ---- sql/schema/functions/definitions/_compare_flow_routes.sql
-- Human-readable routing differences between a worker's deployment (queue mode and route map)
-- and the persisted one, worker first: a different queue mode (every route differs then, so
-- only the mode is reported), else each step whose queue differs. Steps present on one side
-- only are shape differences, reported by _compare_flow_shapes.
-- Called by: ensure_flow_compiled.
create or replace function pgflow._compare_flow_routes(p_local_mode text, p_local_route jsonb,
                                                       p_db_mode text, p_db_route jsonb)
returns text[]
language sql immutable
set search_path = ''
as $$
  select case
    when p_local_mode is distinct from p_db_mode
      then array[format('Queue mode differs: ''%s'' vs ''%s''', p_local_mode, p_db_mode)]
    else array(
      select format('Route of step ''%s'' differs: ''%s'' vs ''%s''', l->>'stepSlug',
                    l->>'queueName', d->>'queueName')
      from jsonb_array_elements(p_local_route) with ordinality as lx(l, n)
      join jsonb_array_elements(p_db_route) d on d->>'stepSlug' = l->>'stepSlug'
      where (l->>'queueName') is distinct from (d->>'queueName')
      order by lx.n)
  end
$$;

-- ---- sql/schema/functions/definitions/_preflight_flow_shape.sql
-- Checks a whole definition before anything is written: the flow slug and every step slug
-- under the shared rules, no exact or case-only duplicate steps, dependencies on earlier steps
-- only, and queue names PGMQ accepts: the flow's generated queue, and in queue mode `step` a
-- private queue for every step (a flow with no steps cannot use step queues).
-- (add_step checks a map's single dependency.)
-- Locks: none.
-- Called by: _create_flow_from_shape.
create or replace function pgflow._preflight_flow_shape(p_flow_slug text, p_shape jsonb, p_queue_mode text)
returns void
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_problem text := pgflow._slug_problem(p_flow_slug);
  v_seen text[] := '{}';
  v_step jsonb;
  v_slug text;
  v_index int;
  v_dep text;
begin
  perform pgflow._validate_flow_shape(p_shape);
  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', p_flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(p_flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      p_flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    v_slug := v_step->>'slug';
    v_problem := pgflow._slug_problem(v_slug);
    if v_problem is not null then
      raise exception 'Invalid step slug "%" in flow "%": it %', v_slug, p_flow_slug, v_problem
        using errcode = 'check_violation', constraint = 'steps_step_slug_check';
    end if;
    if lower(v_slug) = any(v_seen) then
      raise exception 'Step slug "%" of flow "%" is defined twice (slugs must be unique ignoring case)',
        v_slug, p_flow_slug using errcode = 'unique_violation';
    end if;
    for v_dep in select jsonb_array_elements_text(v_step->'dependencies') loop
      if not lower(v_dep) = any(v_seen) or v_dep is null then
        raise exception 'Step "%" of flow "%" depends on "%", which is not defined before it',
          v_slug, p_flow_slug, v_dep using errcode = 'foreign_key_violation';
      end if;
    end loop;
    v_seen := v_seen || lower(v_slug);
  end loop;
  if p_queue_mode not in ('flow', 'step') or p_queue_mode is null then
    raise exception 'Invalid queue mode "%" for flow "%": expected "flow" or "step"', p_queue_mode, p_flow_slug
      using errcode = 'invalid_parameter_value';
  end if;
  if p_queue_mode = 'step' then
    if jsonb_array_length(p_shape->'steps') = 0 then
      raise exception 'Flow "%" has no steps, so it cannot use step queues (queue mode step needs at least one step)',
        p_flow_slug using errcode = 'invalid_parameter_value';
    end if;
    select r.step_slug, r.step_index into v_slug, v_index
    from pgflow._flow_route(p_flow_slug, p_shape, 'step') r
    where r.queue_name is null order by r.step_index limit 1;
    if found then
      raise exception 'Flow "%" cannot use step queues: the private queue of step "%" (index %) would be "%" or "%", longer than PGMQ''s 47 characters either way; shorten the flow slug',
        p_flow_slug, v_slug, v_index, lower(p_flow_slug || '__' || v_slug), lower(p_flow_slug || '__' || v_index)
        using errcode = 'name_too_long';
    end if;
  end if;
end;
$$;

-- ---- sql/schema/functions/definitions/_create_flow_from_shape.sql
-- The complete compiler: preflight the whole definition (and, in queue mode `step`, every
-- private queue) before anything is written, persist the flow with its queue mode, provision
-- its queues - the generated queue lower(flow_slug) in mode `flow` (even for a flow without
-- steps), exactly the step queues and no default queue in mode `step` - then create the steps
-- with their route.
-- Locks: the caller holds the flow's definition lock (create_flow/_add_step take it again).
-- Called by: ensure_flow_compiled.
create or replace function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb,
                                                          p_queue_mode text default 'flow')
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
  perform pgflow.create_flow(
    p_flow_slug,
    (p_shape->'options'->>'maxAttempts')::int,
    (p_shape->'options'->>'baseDelay')::int,
    (p_shape->'options'->>'timeout')::int);
  if p_queue_mode = 'step' then
    update pgflow.flows f set queue_mode = 'step' where f.flow_slug = p_flow_slug;
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
-- Deletes a flow with all its runs and its private queues, in one transaction (seed 000's
-- five steps):
--   1. lock the flow identity; collect and validate its route (the distinct steps.queue_name:
--      the private step queues in queue mode `step`; plus, in mode `flow`, an owned default
--      queue lower(flow_slug) of a flow without steps), the task snapshots, the exact
--      pgmq.meta spelling and both tables of each queue, and that no other flow references
--      them;
--   2. lock its runs (run_id order), like callbacks and recovery do;
--   3. delete runtime rows and step definitions, keeping the flow row and the validated names;
--   4. drop exactly those queues (with their archives): no per-message archiving first;
--   5. delete the flow row last.
-- Anything missing, ambiguous, malformed or referenced elsewhere fails the whole deletion.
-- Destructive: for development (local recompilation) and operators.
-- Locks: definition lock -> flow row FOR NO KEY UPDATE -> runs FOR UPDATE -> (deletes) -> queues.
-- Called by: ensure_flow_compiled (local recompilation); operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text) returns void
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
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
end;
$$;

-- ---- sql/schema/functions/definitions/ensure_flow_compiled.sql
-- Startup compilation, the only compile path since upstream 0.16.0.
--
-- ensure_flow_compiled(flow_slug, shape, worker_protocol, queue_mode, route_map): for workers
-- of this database's protocol. The worker's deployment is its shape plus its queue mode
-- (`flow` | `step`, upstream 0.17's contract) and, optionally, the route map it derived
-- ([{stepSlug, queueName}], which must equal what _flow_route derives). Creates a missing flow
-- (compiled), verifies an existing one - shape, queue mode and route, and that its queues are
-- present and owned (verified) -, recompiles destructively on a local database (recompiled),
-- or reports the differences and changes nothing (mismatch). A different queue mode or route
-- is a mismatch like a different shape; mismatchKind says which ('shape' when the shape
-- differs, else 'routing'). Returns {status, differences, mismatchKind, queue_mode, routes
-- (the persisted route map), queue_name (the flow's queue in mode `flow`)}.
--
-- ensure_flow_compiled(flow_slug, shape): upstream 0.16.0's signature. Workers of 0.16.0 call
-- it first; it refuses them with the protocol error, so they stop before registering.
--
-- Locks: the flow's definition lock (then whatever compilation or deletion takes).
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
                                                       route_map jsonb default null)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_mode text := coalesce(ensure_flow_compiled.queue_mode, 'flow');
  v_route jsonb;
  v_flow pgflow.flows;
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
  perform pgflow._lock_flow_definition(ensure_flow_compiled.flow_slug);

  select * into v_flow from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug;
  if not found then
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape, v_mode);
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
      perform pgflow.delete_flow_and_data(ensure_flow_compiled.flow_slug);
      perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape, v_mode);
      v_status := 'recompiled';
    else
      v_status := 'mismatch';
    end if;
  end if;
  select * into v_flow from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug;
  return jsonb_build_object(
    'status', v_status,
    'differences', to_jsonb(v_shape_diffs || v_route_diffs),
    'mismatchKind', case when v_status not in ('mismatch', 'recompiled') then null
                         when cardinality(v_shape_diffs) > 0 then 'shape' else 'routing' end,
    'queue_mode', v_flow.queue_mode,
    'routes', pgflow._get_flow_route(ensure_flow_compiled.flow_slug),
    'queue_name', case when v_flow.queue_mode = 'flow' then lower(ensure_flow_compiled.flow_slug) end);
end;
$$;

-- ---- sql/schema/functions/queues/_provision_flow_queue.sql
-- Validates, and when absent creates, the generated queue of a plain flow: lower(flow_slug).
--
-- Ownership is derived from the persisted definition, never from a registry: the flow owns
-- its generated queue when one of its steps already routes to it, or when the queue was
-- created in the transaction that persisted the flow (same pgmq.meta.created_at as
-- flows.created_at, i.e. by the compiler or by this function). Anything else holding that
-- name is a collision: pgflow never adopts a queue it did not create.
--
-- Locks: the caller holds the flow's definition lock and the flow row exists; pgmq.create.
-- Only flows in queue mode `flow` have this queue.
-- Called by: add_step, _create_flow_from_shape, ensure_flow_compiled.
create or replace function pgflow._provision_flow_queue(p_flow_slug text) returns text
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text := lower(p_flow_slug);
  v_flow pgflow.flows;
  v_meta record;
  v_matches int;
begin
  select * into strict v_flow from pgflow.flows f where f.flow_slug = p_flow_slug;
  if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
     or exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
    raise exception 'Queue "%" of flow "%" is already used by another flow', v_queue, p_flow_slug
      using errcode = 'unique_violation';
  end if;

  select count(*) into v_matches from pgmq.meta m where lower(m.queue_name) = v_queue;
  if v_matches > 0 then
    perform pgflow._queue_meta_name(v_queue);  -- exactly one row and both tables, or an error
    select m.* into v_meta from pgmq.meta m where lower(m.queue_name) = v_queue;
    if exists (select 1 from pgflow.steps s where s.flow_slug = p_flow_slug and s.queue_name = v_queue)
       or v_meta.created_at = v_flow.created_at then
      return v_queue;
    end if;
    raise exception 'PGMQ queue "%" already exists but flow "%" did not create it; pgflow never adopts an existing queue. Drop or rename that queue, or use another flow slug',
      v_meta.queue_name, p_flow_slug
      using errcode = 'duplicate_object';
  end if;

  if to_regclass(format('pgmq.%I', 'q_' || v_queue)) is not null
     or to_regclass(format('pgmq.%I', 'a_' || v_queue)) is not null then
    raise exception 'PGMQ tables pgmq.q_% / pgmq.a_% exist without a pgmq.meta row; refusing to reuse them',
      v_queue, v_queue using errcode = 'duplicate_object';
  end if;
  -- Steps already route to the queue but it is gone: a recreated queue would restart message
  -- ids under the existing task snapshots (queue_name, message_id). Never recreate silently.
  if exists (select 1 from pgflow.steps s where s.flow_slug = p_flow_slug and s.queue_name = v_queue) then
    raise exception 'PGMQ queue "%" of flow "%" is missing although its steps route to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or use another flow slug',
      v_queue, p_flow_slug using errcode = 'undefined_object';
  end if;

  perform pgflow._create_queue(v_queue);
  return v_queue;
end;
$$;

-- ---- sql/schema/functions/queues/_step_queue_name.sql
-- The private queue of a step of a step-queued flow: lower(flow_slug || '__' || step_slug)
-- when it fits PGMQ's 47 characters, else lower(flow_slug || '__' || step_index) (zero-based;
-- it cannot equal a readable name because slugs cannot start with a digit), else NULL: the
-- flow cannot use step queues and is rejected whole. Never truncated, never hashed. Slugs
-- cannot contain `__`, so the separator is unambiguous and no two flows derive the same name.
-- The C++ SDK derives the same names (pgflow::routes_of); tests/data/step_queue_names.tsv
-- drives both.
-- Called by: _flow_route.
create or replace function pgflow._step_queue_name(p_flow_slug text, p_step_slug text, p_step_index int)
returns text
language sql immutable parallel safe
set search_path = ''
as $$
  select case
    when length(p_flow_slug) + 2 + length(p_step_slug) <= 47
      then lower(p_flow_slug || '__' || p_step_slug)
    when length(p_flow_slug) + 2 + length(p_step_index::text) <= 47
      then lower(p_flow_slug || '__' || p_step_index)
  end
$$;

-- ---- sql/schema/functions/queues/_preflight_step_queues.sql
-- Checks, before anything is created, that a new step-queued definition can create every one
-- of its private queues: no other flow routes to the name or has tasks in it, and neither a
-- PGMQ queue (in any letter case: pgmq.meta aliases address the same tables) nor orphan tables
-- hold it. For a definition that does not exist yet, an existing queue with a generated name
-- is a collision, never adopted. Every problem is listed in one error; nothing is changed.
-- Locks: none (reads); the caller holds the flow's definition lock.
-- Called by: _create_flow_from_shape.
create or replace function pgflow._preflight_step_queues(p_flow_slug text, p_queues text[])
returns void
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_other text;
  v_meta text[];
  v_problems text[] := '{}';
begin
  foreach v_queue in array p_queues loop
    select coalesce(s.flow_slug, t.flow_slug) into v_other
    from (select 1) x
    left join lateral (select s.flow_slug from pgflow.steps s
                       where s.queue_name = v_queue and s.flow_slug <> p_flow_slug limit 1) s on true
    left join lateral (select t.flow_slug from pgflow.step_tasks t
                       where t.queue_name = v_queue and t.flow_slug <> p_flow_slug limit 1) t on true;
    select array_agg(m.queue_name::text order by m.queue_name) into v_meta
    from pgmq.meta m where lower(m.queue_name) = v_queue;
    if v_other is not null then
      v_problems := v_problems || format('queue "%s" is already used by flow "%s"', v_queue, v_other);
    elsif cardinality(v_meta) > 1 then
      v_problems := v_problems || format('pgmq.meta has %s rows for the tables of queue "%s" (%s): case aliases',
                                         cardinality(v_meta), v_queue, array_to_string(v_meta, ', '));
    elsif v_meta is not null then
      v_problems := v_problems || format('PGMQ queue "%s" already exists; pgflow never adopts a queue it did not create',
                                         v_meta[1]);
    elsif to_regclass(format('pgmq.%I', 'q_' || v_queue)) is not null
          or to_regclass(format('pgmq.%I', 'a_' || v_queue)) is not null then
      v_problems := v_problems || format('PGMQ tables pgmq.q_%s / pgmq.a_%s exist without a pgmq.meta row',
                                         v_queue, v_queue);
    end if;
  end loop;
  if cardinality(v_problems) > 0 then
    raise exception e'Flow "%" cannot get its step queues (nothing was created):\n  - %\nDrop or rename those queues, or deploy the flow under another slug',
      p_flow_slug, array_to_string(v_problems, e'\n  - ')
      using errcode = 'duplicate_object';
  end if;
end;
$$;

-- ---- sql/schema/functions/queues/_verify_step_queues.sql
-- Verifies the private queues of an existing step-queued flow: every queue on its persisted
-- route exists exactly once in pgmq.meta (no case aliases) with both tables, and no other flow
-- routes to it or has tasks in it. An owned queue that has gone missing is an error, never
-- recreated: a new queue would restart message ids under existing task snapshots.
-- Locks: none (reads); the caller holds the flow's definition lock.
-- Called by: ensure_flow_compiled (verification).
create or replace function pgflow._verify_step_queues(p_flow_slug text) returns void
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_route record;
begin
  for v_route in select s.step_slug, s.queue_name from pgflow.steps s
                 where s.flow_slug = p_flow_slug order by s.step_index loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_route.queue_name and s.flow_slug <> p_flow_slug)
       or exists (select 1 from pgflow.step_tasks t
                  where t.queue_name = v_route.queue_name and t.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of step "%" of flow "%" is also used by another flow',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'unique_violation';
    end if;
    if not exists (select 1 from pgmq.meta m where lower(m.queue_name) = v_route.queue_name) then
      raise exception 'PGMQ queue "%" of step "%" of flow "%" is missing although the step routes to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or deploy the flow under a new slug',
        v_route.queue_name, v_route.step_slug, p_flow_slug using errcode = 'undefined_object';
    end if;
    perform pgflow._queue_meta_name(v_route.queue_name);  -- exactly one row and both tables
  end loop;
end;
$$;

-- ---- sql/schema/functions/queues/_create_queue.sql
-- Creates a generated queue for the definition this transaction persists, and makes sure this
-- transaction created it. pgmq.create() is idempotent, so a queue someone else created
-- meanwhile (its pgmq.meta row carries another transaction's start time) or an alias row for
-- the same tables is refused, never adopted.
-- Locks: pgmq.meta and the queue's new tables (pgmq.create). The caller holds the flow's
-- definition lock and has checked that nothing holds the name.
-- Called by: _provision_flow_queue, _create_flow_from_shape (step queues).
create or replace function pgflow._create_queue(p_queue_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  begin
    perform pgmq.create(p_queue_name);
  exception when unique_violation then
    -- Another session created the same tables and committed while this one waited for them.
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
  end;
  if (select count(*) from pgmq.meta m where lower(m.queue_name) = p_queue_name) <> 1
     or not exists (select 1 from pgmq.meta m
                    where m.queue_name = p_queue_name and m.created_at = now()) then
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', p_queue_name
      using errcode = 'duplicate_object';
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
-- Locks: runs FOR SHARE (run_id order) -> task rows -> queue rows.
-- Called by: workers (one round trip with pgmq.read), start_tasks.
create or replace function pgflow.claim_tasks(queue_name text, flow_slug text, msg_ids bigint[], worker_id uuid,
                                              step_slug text default null)
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = ''
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
        last_worker_id = claim_tasks.worker_id
    where t.ctid = v_item.task and t.status = 'queued';
    if found then
      v_claim := v_claim || v_item.msg_id;
    end if;
  end loop;
  v_items := array(
    select case when c.class = 'claim' and not c.msg_id = any(v_claim)
             then row(c.msg_id, 'taken', 'claimed by another worker meanwhile', c.run_id,
                      c.step_slug, c.task_index, c.deadline, c.task)::pgflow._claim_item
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

-- ---- sql/schema/functions/claims/_classify_claim_batch.sql
-- Classifies every message of a claim batch, changing nothing. Each message is looked up by
-- (queue_name, message_id); its body is read only when no task has that identity. The first
-- rule that applies decides:
--   fatal    its task belongs to another flow, or to another step than the claim's (wrong route)
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
set search_path = ''
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
      (3, t.status = 'queued' and r.status = 'started' and ss.status = 'started', 'claim', null),
      (4, t.status = 'queued', 'fatal',
          format('its task is queued but its run is %s and its step %s (inconsistent state)',
                 r.status, ss.status)),
      (5, t.status = 'started', 'defer', 'its task is already running'),
      (6, t.run_id is not null, 'archive', format('its task is %s', t.status)),
      (7, b.msg_id is null, 'gone', 'no such message'),
      (8, jsonb_typeof(b.message) = 'object'
          and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index'],
          'fatal', 'it looks like pgflow work but no task has this (queue, message id)'),
      (9, true, 'archive', 'foreign message without a pgflow task address')
    ) as v(rank, applies, class, reason)
    where v.applies
    order by v.rank
    limit 1) rule;
  return v_items;
end;
$$;

-- ---- sql/schema/functions/workers/worker_protocol.sql
-- The worker protocol this database speaks. A worker compares it with its own before doing
-- anything else, and the database refuses any other at compilation and registration.
--   2  queue identity: claim_tasks(queue, flow, ids, worker), register_worker (0002)
--   3  per-step queues: ensure_flow_compiled(..., queue_mode, route_map), claims with a step
--      selector, step workers registered on their step's queue (0004)
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select 3
$$;

-- ---- sql/schema/functions/workers/_require_worker_protocol.sql
-- Raises the protocol error unless `p_protocol` is the one this database speaks; the message
-- says whether the worker or the database needs upgrading.
-- Called by: ensure_flow_compiled, register_worker, track_worker_function, _workers_require_protocol.
create or replace function pgflow._require_worker_protocol(p_protocol int) returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if p_protocol is distinct from pgflow.worker_protocol() then
    raise exception 'pgflow: worker protocol % is not supported by this database (it speaks protocol %): %',
      coalesce(p_protocol::text, 'none'), pgflow.worker_protocol(),
      case when coalesce(p_protocol, 0) < 2
             then 'upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)'
           when p_protocol < pgflow.worker_protocol()
             then 'upgrade the worker (its pgflow library is older than this database''s schema)'
           else 'upgrade the database with `pgflow migrate`' end
      using errcode = 'feature_not_supported';
  end if;
end;
$$;

-- ---- sql/schema/functions/workers/register_worker.sql
-- Registers a worker of this database's protocol for one flow on one queue, after
-- compilation: the flow's queue in queue mode `flow`, one step's private queue in mode `step`
-- (the worker row records that queue; its claims name the step). Refuses a worker function
-- paused by a fatal claim (see resume_worker_function) and a queue that is not on the flow's
-- route.
-- Locks: the worker_functions row (upsert).
-- Called by: EdgeWorker startup.
create or replace function pgflow.register_worker(worker_id uuid, function_name text, flow_slug text,
                                       queue_name text, worker_protocol int)
returns pgflow.workers
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_route text[];
  v_function pgflow.worker_functions;
  v_worker pgflow.workers;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
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
    raise exception 'Worker function "%" is paused since % (%); fix the cause, then run: select pgflow.resume_worker_function(''%'');',
      v_function.function_name, v_function.paused_at, v_function.pause_reason, v_function.function_name
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
  values (register_worker.worker_id, register_worker.queue_name, register_worker.function_name,
          register_worker.worker_protocol)
  returning * into v_worker;
  return v_worker;
end;
$$;
