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
