-- pgflow SQL core, 0006: results reported in batches, set-based.
--
--   * complete_tasks(results jsonb): a batch of results in one call. Each ends exactly as
--     complete_task would leave it applied one by one in (run_id, step_slug, task_index)
--     order; runs whose results complete tasks of one step (the usual batch) are completed
--     set-based: one UPDATE per table for the whole batch and one pgmq.archive per queue,
--     instead of a dozen statements per task.
--   * fail_tasks(results jsonb): a batch of failures in one call, each applied as fail_task.
--   * maybe_complete_run reads the run output through _run_output (shared with complete_tasks).
--   * start_flow_by_slug, claim_tasks, complete_task(s), _fail_task and fail_tasks are declared
--     `set enable_seqscan = off`: sessions keep index plans after a burst into empty tables
--     (sql/schema/README.md, Plans).
--   * pgflow.notify_events = off (per database, role or session) silences channel
--     pgflow_events (docs/observability.md).
--   * Worker protocol 5 (workers that report with complete_tasks / fail_tasks); workers of
--     protocol 4 are still accepted, so workers can be upgraded after the database.
--
-- And corrections to 0005's alias functions (released; fixed here, never edited):
--   * delete_flow_and_data(flow_slug, p_remove_alias default false): the sole version of a
--     named alias is deleted with its alias only with p_remove_alias => true (a self-alias, a
--     plain flow, as before); the alias rules are re-checked under the locks (a flow recreated
--     meanwhile raises 40001); lock order alias -> definition -> alias row -> flow row.
--   * activate_flow_version: NULL alias or slug raise 22004; the flow's definition lock is
--     taken after the alias lock.
--   * ensure_flow_compiled checks the alias only when one is given and reports the activation
--     it finds after its insert.
--
-- Only functions change: no table is touched and no lock is taken beyond those of
-- CREATE OR REPLACE FUNCTION. Applied by the pgflow migration runner in one transaction.
-- Immutable once released.
set local check_function_bodies = off;

drop function pgflow.delete_flow_and_data(text);

-- ---- sql/schema/functions/definitions/delete_flow_and_data.sql
-- Deletes a flow with all its runs and its private queues, in one transaction: the alias rules
-- first, then _delete_flow_contents (seed 000's steps 1-4), then the flow row last (step 5).
-- Alias rules (seed 004): an inactive version can be deleted; the active version cannot while
-- its alias has other versions (activate another one first); the sole version of an alias is
-- deleted together with the alias - for a self-alias (a plain flow) by default, for a named
-- alias only with p_remove_alias => true, because callers start that alias. Destructive: for
-- operators and development.
-- Locks: alias lock -> definition lock -> alias row -> flow row -> runs -> queues.
-- Called by: operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text, p_remove_alias boolean default false)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_alias text;
  v_active text;
  v_members text[];
begin
  -- A flow's alias is immutable while the flow exists, so it can be read before the locks;
  -- read again under them in case the flow was deleted and created anew meanwhile.
  select f.flow_alias into v_alias from pgflow.flows f where f.flow_slug = p_flow_slug;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;
  perform pgflow._lock_flow_alias(v_alias);
  perform pgflow._lock_flow_definition(p_flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = p_flow_slug and f.flow_alias = v_alias) then
    raise exception 'Flow "%" was deleted or created anew while this deletion waited for it; try again', p_flow_slug
      using errcode = 'serialization_failure';
  end if;

  select a.flow_slug into v_active from pgflow.flow_aliases a where a.flow_alias = v_alias for update;
  if v_active = p_flow_slug then
    v_members := array(select f.flow_slug from pgflow.flows f
                       where f.flow_alias = v_alias and f.flow_slug <> p_flow_slug order by f.flow_slug);
    if cardinality(v_members) > 0 then
      raise exception 'Flow "%" is the active version of alias "%", which has other versions (%); activate one of them first (pgflow.activate_flow_version), then delete this one',
        p_flow_slug, v_alias, array_to_string(v_members, ', ') using errcode = 'object_in_use';
    elsif v_alias <> p_flow_slug and not coalesce(p_remove_alias, false) then
      raise exception 'Flow "%" is the only version of alias "%"; deleting it removes the alias, which callers start: pass p_remove_alias => true to do that',
        p_flow_slug, v_alias using errcode = 'object_in_use';
    end if;
  end if;

  perform pgflow._delete_flow_contents(p_flow_slug);
  if v_active = p_flow_slug then
    delete from pgflow.flow_aliases a where a.flow_alias = v_alias;  -- its sole version
  end if;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
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
    -- (_create_flow has done it for a new flow; the pointer row decides either way.)
    insert into pgflow.flow_aliases (flow_alias, flow_slug) values (v_alias, ensure_flow_compiled.flow_slug)
    on conflict (flow_alias) do nothing;
    select a.flow_slug into v_active from pgflow.flow_aliases a where a.flow_alias = v_alias;
    v_activation := case when v_active = ensure_flow_compiled.flow_slug then 'activated' else 'inactive' end;
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
-- Locks: the alias lock, the flow's definition lock, then the alias row.
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

-- ---- sql/schema/functions/queues/_terminate_tasks.sql
-- Moves every queued or started task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages, one batch per task queue snapshot
-- (_archive_messages): task rows first, then queue rows.
-- Locks: the caller holds the run.
-- Called by: _fail_run, _cascade_force_skip_steps, _fail_task.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queues text[];
  v_ids bigint[];
begin
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
-- Locks: the caller holds the tasks' runs; queue rows last (lock order position 5).
-- Called by: _terminate_tasks, complete_tasks.
create or replace function pgflow._archive_messages(p_queue_names text[], p_message_ids bigint[])
returns void
language plpgsql volatile
set search_path = ''
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
    perform pgmq.archive(v_batch.queue_name, v_batch.ids);
  end loop;
end;
$$;

-- ---- sql/schema/functions/events/_emit.sql
-- Publishes one state change. `payload` is upstream's broadcast payload (it carries
-- event_type, run_id, status and, for step events, step_slug), built by _emit_run_event or
-- _emit_step_event; `event` is upstream's event name (run:<kind> or step:<slug>:<kind>). The
-- pg_notify copy on channel pgflow_events keeps only ids, slugs and status, so it stays far
-- below NOTIFY's 8000-byte limit and never carries data; setting pgflow.notify_events to off
-- turns it off (see below; docs/observability.md). When realtime.send(jsonb, text, text,
-- boolean) exists (Supabase), the upstream broadcast goes out too, on topic
-- pgflow:run:<run_id>.
-- Called by: _emit_run_event, _emit_step_event.
create or replace function pgflow._emit(payload jsonb, event text, flow_slug text) returns void
language plpgsql volatile
set search_path = ''
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
    perform realtime.send(payload, event, 'pgflow:run:' || (payload->>'run_id'), false);
  end if;
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
set search_path = ''
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

-- ---- sql/schema/functions/runtime/start_ready_steps.sql
-- Starts every ready step with a known, positive task count (in step_slug order), and gives each
-- its tasks and messages (_enqueue_step_tasks).
-- Locks: the caller holds the run; step states FOR UPDATE -> task rows -> queue rows.
-- Called by: _advance_run.
create or replace function pgflow.start_ready_steps(run_id uuid) returns void
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
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._enqueue_step_tasks(v_run, v_step.state, v_step.queue_name, v_step.start_delay);
  end loop;
end;
$$;

-- ---- sql/schema/functions/runtime/_enqueue_step_tasks.sql
-- Gives a step that has just been started its tasks: publishes step:started, sends one message
-- per task to the step's queue (delayed by its start_delay) and inserts one queued task row per
-- message that snapshots that queue; announces the work when it is visible at once. No queue
-- DDL happens here.
-- Locks: the caller holds the run and the step state; task rows -> queue rows.
-- Called by: start_ready_steps, start_flow_by_slug (root steps it creates started).
create or replace function pgflow._enqueue_step_tasks(p_run pgflow.runs, p_state pgflow.step_states,
                                                      p_queue_name text, p_start_delay int)
returns void
language plpgsql volatile
set search_path = ''
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
         p_start_delay) with ordinality as m(msg_id, n);
  if p_start_delay = 0 then
    perform pgflow._announce_work(p_queue_name);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/maybe_complete_run.sql
-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf steps
-- (NULL when none completed; _run_output). Only a started run can complete.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = now(),
      output = pgflow._run_output(r.run_id)
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit_run_event(v_run);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/_run_output.sql
-- A completed run's output: {leaf_slug: output} of its completed leaf steps (steps no other
-- step depends on); NULL when none completed.
-- Called by: maybe_complete_run, complete_tasks.
create or replace function pgflow._run_output(p_run_id uuid) returns jsonb
language plpgsql stable  -- plpgsql, not sql: its plan is cached (a hot path)
set search_path = ''
as $$
begin
  return (select jsonb_object_agg(ss.step_slug, ss.output)
          from pgflow.step_states ss
          where ss.run_id = p_run_id and ss.status = 'completed'
            and not exists (select 1 from pgflow.deps d
                            where d.flow_slug = ss.flow_slug and d.dep_slug = ss.step_slug));
end;
$$;

-- ---- sql/schema/functions/runtime/complete_task.sql
-- Reports a task's result. Only a started task of a started step of a started run completes;
-- anything else changes nothing (a late callback's message is archived). The last task of a
-- step completes the step (a map's output is every task output in task_index order), releases
-- its dependents and advances the run. A single step feeding a map whose size is still
-- unknown must produce an array, or the run fails with [TYPE_VIOLATION].
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: workers (the reporter); SQL users. Calls _fail_type_violation (off the hot path).
create or replace function pgflow.complete_task(run_id uuid, step_slug text, task_index int, output jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_child text;
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
      return next pgflow._fail_type_violation(v_run, v_task, v_child, complete_task.output);
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
    perform pgflow._emit_step_event(v_state);
    perform pgflow._advance_run(v_run.run_id);
  end if;

  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return next v_task;
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
-- Locks: runs FOR UPDATE in run_id order (_lock_runs) -> step states -> tasks -> messages last.
-- Called by: workers (the reporter, protocol 5); SQL users.
create or replace function pgflow.complete_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
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
  v_run pgflow.runs;
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

    perform pgflow._emit_step_event(f) from unnest(v_finished) f;

    -- Runs without steps left complete (maybe_complete_run for all of them at once); the
    -- others move on.
    for v_run in
      update pgflow.runs r
      set status = 'completed', completed_at = now(), output = pgflow._run_output(r.run_id)
      from unnest(v_finished) f
      where r.run_id = f.run_id and r.status = 'started' and r.remaining_steps = 0
      returning r.*
    loop
      perform pgflow._emit_run_event(v_run);
    end loop;
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

-- ---- sql/schema/functions/runtime/_task_results.sql
-- Reads a batch of task results for complete_tasks / fail_tasks: a JSON array of objects
-- {"run_id", "step_slug", "task_index", <value_key>}. Returns them in the order they are
-- applied, (run_id, step_slug, task_index, position in the batch), with `value` the value of
-- `value_key` as jsonb (JSON null stays JSON null; a missing key is SQL NULL). Raises 22023
-- naming the first malformed element (by its 1-based position) and changes nothing.
-- Called by: complete_tasks, fail_tasks.
create or replace function pgflow._task_results(p_results jsonb, p_caller text, p_value_key text)
returns table (run_id uuid, step_slug text, task_index int, value jsonb, pos bigint)
language plpgsql stable
set search_path = ''
as $$
declare
  v_bad record;
begin
  if jsonb_typeof(p_results) is distinct from 'array' then
    raise exception '%(): results must be a JSON array of {run_id, step_slug, task_index, %}, not %',
      p_caller, p_value_key, coalesce(jsonb_typeof(p_results), 'NULL')
      using errcode = 'invalid_parameter_value';
  end if;
  select e.pos, e.elem into v_bad
  from jsonb_array_elements(p_results) with ordinality e(elem, pos)
  where jsonb_typeof(e.elem) is distinct from 'object'
     or jsonb_typeof(e.elem->'run_id') is distinct from 'string'
     or jsonb_typeof(e.elem->'step_slug') is distinct from 'string'
     or jsonb_typeof(e.elem->'task_index') is distinct from 'number'
  order by e.pos
  limit 1;
  if found then
    raise exception '%(): result % is not an object with a string run_id, a string step_slug and a numeric task_index',
      p_caller, v_bad.pos
      using errcode = 'invalid_parameter_value';
  end if;
  return query
  select (e.elem->>'run_id')::uuid, e.elem->>'step_slug', (e.elem->>'task_index')::int,
         e.elem->p_value_key, e.pos
  from jsonb_array_elements(p_results) with ordinality e(elem, pos)
  order by 1, 2, 3, 5;
end;
$$;

-- ---- sql/schema/functions/runtime/_lock_runs.sql
-- Locks the given runs FOR UPDATE in run_id order, one primary-key probe each (no plan that
-- depends on statistics), so that batch callers lock runs in one global order and cannot
-- deadlock each other. Missing runs are skipped.
-- Locks: runs FOR UPDATE (lock order position 2), nothing else.
-- Called by: complete_tasks, fail_tasks.
create or replace function pgflow._lock_runs(p_run_ids uuid[]) returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  v_run_id uuid;
begin
  for v_run_id in select distinct u.id from unnest(p_run_ids) u(id) order by u.id loop
    perform 1 from pgflow.runs r where r.run_id = v_run_id for update;
  end loop;
end;
$$;

-- ---- sql/schema/functions/runtime/_fail_task.sql
-- The failure path shared by fail_task and stall recovery. Retries with backoff while attempts
-- remain, unless `p_exhaust` treats this attempt as the last one; then applies the step's
-- when_exhausted mode (fail the step and the run, skip the step, or skip it with everything
-- downstream).
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: fail_task, requeue_stalled_tasks.
create or replace function pgflow._fail_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                  p_error_message text, p_exhaust boolean)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
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
    perform pgflow._emit_step_event(v_state);
    perform pgflow._fail_run(p_run_id, p_error_message);
  else
    update pgflow.step_states ss
    set status = 'skipped', skip_reason = 'handler_failed', skipped_at = now(),
        error_message = p_error_message, remaining_tasks = null
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = p_run_id;
    perform pgflow._terminate_tasks(p_run_id, array[p_step_slug], 'skipped');
    perform pgflow._emit_step_event(v_state);
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

-- ---- sql/schema/functions/runtime/fail_tasks.sql
-- Reports a batch of handler failures in one call (the worker's reporter): `results` is a
-- JSON array of {"run_id", "step_slug", "task_index", "error_message"}. Every run of the batch
-- is locked first, in run_id order; then each failure is applied exactly as fail_task applies
-- it, in (run_id, step_slug, task_index) order. Failures are rare next to completions, so this
-- saves round trips, not per-task work. Returns the row fail_task returns for each.
-- Locks: runs FOR UPDATE in run_id order, then as _fail_task for each result.
-- Called by: workers (the reporter, protocol 5); SQL users.
create or replace function pgflow.fail_tasks(results jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
set enable_seqscan = off  -- plans that do not depend on statistics (sql/schema/README.md, Plans)
as $$
declare
  v_run_ids uuid[];
  v_steps text[];
  v_indexes int[];
  v_errors text[];
begin
  select coalesce(array_agg(r.run_id order by r.n), '{}'), array_agg(r.step_slug order by r.n),
         array_agg(r.task_index order by r.n), array_agg(r.value #>> '{}' order by r.n)
  into v_run_ids, v_steps, v_indexes, v_errors
  from pgflow._task_results(results, 'fail_tasks', 'error_message') with ordinality r(run_id, step_slug, task_index, value, pos, n);

  perform pgflow._lock_runs(v_run_ids);
  for i in 1 .. cardinality(v_run_ids) loop
    return query select * from pgflow._fail_task(v_run_ids[i], v_steps[i], v_indexes[i], v_errors[i], false);
  end loop;
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

-- ---- sql/schema/functions/workers/worker_protocol.sql
-- The worker protocol this database speaks. A worker compares it with its own before doing
-- anything else, and the database refuses any protocol it does not support at compilation and
-- registration (_require_worker_protocol: this one and 4).
--   2  queue identity: claim_tasks(queue, flow, ids, worker), register_worker (0002)
--   3  per-step queues: ensure_flow_compiled(..., queue_mode, route_map), claims with a step
--      selector, step workers registered on their step's queue (0004)
--   4  flow aliases: ensure_flow_compiled(..., flow_alias) deploys a version under an alias
--      and reports its activation (0005)
--   5  batch results: complete_tasks(jsonb) / fail_tasks(jsonb) (0006). Protocol 4 workers
--      are still accepted: everything they call is unchanged.
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select 5
$$;

-- ---- sql/schema/functions/workers/_require_worker_protocol.sql
-- Raises the protocol error unless the database supports `p_protocol`: the one it speaks
-- (worker_protocol()) or 4, whose workers call nothing that changed since; the message says
-- whether the worker or the database needs upgrading.
-- Called by: ensure_flow_compiled, register_worker, track_worker_function, _workers_require_protocol.
create or replace function pgflow._require_worker_protocol(p_protocol int) returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if p_protocol is null or p_protocol not between 4 and pgflow.worker_protocol() then
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
