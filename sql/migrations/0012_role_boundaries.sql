-- pgflow SQL core, 0012: role boundaries that hold against an attacker (docs/security.md).
--
--   * Every function of pgflow (and of the bundled PGMQ layer, when it is the one installed)
--     pins search_path to `pg_catalog, pg_temp` instead of ''. With an empty path PostgreSQL
--     searches the session's temporary schema FIRST for type and relation names, so a login
--     that may create temporary objects could plant a domain pg_temp.text whose CHECK runs its
--     own function, and every `text` inside a SECURITY DEFINER function then ran that function
--     as the owner. Functions whose body does not change are altered in place (the last block).
--   * The worker API writes as the owner: ensure_flow_compiled, register_worker,
--     worker_heartbeat, mark_worker_stopped, claim_tasks, start_tasks, complete_task(s) and
--     fail_task(s) are SECURITY DEFINER (EXECUTE revoked from PUBLIC), so the worker role needs
--     no INSERT or UPDATE on any pgflow table and cannot plant a step or a task that names
--     another application's queue. sql/contrib/grants.sql withdraws those table privileges
--     and grants EXECUTE on these functions: run it again after this migration.
--     A destructive local recompilation still needs a login that may delete runs.
--   * The alias and definition locks and the stall recovery lock are rows of the new table
--     pgflow.locks, not advisory locks (which any login may take): a login without grants can
--     no longer stall worker startup, activation or stall recovery. Lock waits of startup and
--     operator paths (ensure_flow_compiled, register_worker, activate_flow_version,
--     delete_flow_and_data, run control) are bounded (30 s unless the caller set
--     lock_timeout) and a timeout names the sessions holding the lock.
--   * requeue_stalled_tasks returns NULL when another pass holds the stall recovery lock
--     (workers warn when that lasts), records when its last pass ended, and touches only tasks
--     whose queue is their step's route.
--
-- Preflight: refuses databases holding steps whose queue is not their derived route, or tasks
-- whose queue is not their step's (rows a worker role could write directly before this
-- version); sql/audit/0012_role_boundaries_audit.sql lists them beforehand.
-- Locks: CREATE TABLE pgflow.locks and those of CREATE OR REPLACE / ALTER FUNCTION; the
-- preflight reads steps and step_tasks. Applied by the pgflow migration runner in one
-- transaction. Immutable once released.

set local check_function_bodies = off;

-- [migration-only: preflight]
do $preflight$
declare
  v_problems text[];
  v_count bigint;
begin
  select count(*), (array_agg(x.problem order by x.problem))[1:20] into v_count, v_problems
  from (
    select format('step "%s" of flow "%s" routes to queue "%s", not to its own queue "%s"',
                  s.step_slug, s.flow_slug, s.queue_name,
                  case when f.queue_mode = 'step'
                       then pgflow._step_queue_name(s.flow_slug, s.step_slug, s.step_index)
                       else lower(s.flow_slug) end) as problem
    from pgflow.steps s join pgflow.flows f on f.flow_slug = s.flow_slug
    where s.queue_name is distinct from
          case when f.queue_mode = 'step'
               then pgflow._step_queue_name(s.flow_slug, s.step_slug, s.step_index)
               else lower(s.flow_slug) end
    union all
    select format('%s task(s) of step "%s" of flow "%s" name queue "%s", not their step''s queue "%s"',
                  count(*), s.step_slug, s.flow_slug, t.queue_name, s.queue_name)
    from pgflow.step_tasks t
    join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
    where t.queue_name <> s.queue_name
    group by s.flow_slug, s.step_slug, t.queue_name, s.queue_name
  ) x;
  if v_count > 0 then
    raise exception 'pgflow 0012: % definition or task row(s) name a queue that is not their route, which pgflow never writes: %',
      v_count, array_to_string(v_problems, '; ')
      using errcode = 'check_violation',
            hint = 'Rows like these could be written directly by a worker role before this version. Find out who wrote them, delete those runs (or flows) and run `pgflow migrate` again; `pgflow audit` lists them.';
  end if;
end
$preflight$;
-- [end migration-only]

-- Rows pgflow locks where it serialises work that has no row of its own to lock: the alias and
-- definition locks of a flow that may not exist yet (lock order positions 0 and 1,
-- sql/schema/README.md) and stall recovery (one pass at a time). They were advisory locks before
-- schema 0012; but any login may take any advisory lock, so a login without a single grant could
-- stall worker startup, activation and stall recovery. Locking one of these rows needs UPDATE on
-- this table, which only its owner has (docs/security.md).
--
-- lock_name: 'alias:<lower(alias)>', 'flow:<lower(flow slug)>' (created on first use by
-- _lock_row) or 'stall_recovery'. last_completed_at: when the last stall recovery pass ended
-- (the 'stall_recovery' row only).
create table pgflow.locks (
  lock_name         text primary key,
  last_completed_at timestamptz
);
insert into pgflow.locks (lock_name) values ('stall_recovery');

-- ---- sql/schema/functions/locks/_lock_holders.sql
-- Who holds a lock pgflow gave up waiting for, for error messages and warnings: the other
-- sessions whose transaction began before p_since (a session that held the lock through the
-- whole wait began before the wait did; busy workers with short transactions do not) and that
-- hold transaction p_locker (the xmax of the row waited for), or, when that names nobody (a
-- row still being inserted is invisible to the waiter; several share lockers), a row or table
-- lock on p_table - on any table of schemas pgflow and pgmq when p_table is NULL.
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

-- ---- sql/schema/functions/locks/_bound_lock_waits.sql
-- Bounds the lock waits of a startup or operator path: when the caller set no lock_timeout
-- (0, PostgreSQL's default: wait forever), sets 30 s for the rest of the transaction; a
-- caller's own lock_timeout is kept. Returns the value to put back with
-- set_config('lock_timeout', <it>, true) when the bounded work is done (an error rolls the
-- setting back with the transaction or savepoint anyway).
-- Called by: _lock_row, _lock_run_for_control, ensure_flow_compiled, register_worker,
-- activate_flow_version, delete_flow_and_data.
create or replace function pgflow._bound_lock_waits() returns text
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_current text := current_setting('lock_timeout');
begin
  if v_current = '0' then
    perform set_config('lock_timeout', '30s', true);
  end if;
  return v_current;
end;
$$;

-- ---- sql/schema/functions/locks/_raise_lock_timeout.sql
-- The error of a bounded lock wait that timed out (SQLSTATE 55P03, as PostgreSQL's own): what
-- waited, for how long, and who holds the lock (_lock_holders), instead of PostgreSQL's bare
-- "canceling statement due to lock timeout". p_caught: the message of the error being replaced;
-- when an inner bounded wait (_lock_row) already named its holder, that message is kept.
-- Called by: the exception handlers of _lock_row, _lock_run_for_control and the bounded entry
-- points (_bound_lock_waits).
create or replace function pgflow._raise_lock_timeout(p_what text, p_locker xid, p_table regclass,
                                                      p_since timestamptz, p_caught text default null)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_message text := p_caught;
begin
  if v_message is null or not starts_with(v_message, 'pgflow: gave up waiting') then
    v_message := format('pgflow: gave up waiting for %s after %s s; held by %s', p_what,
                        round(extract(epoch from clock_timestamp() - p_since)::numeric, 1),
                        pgflow._lock_holders(p_locker, p_table, p_since));
  end if;
  raise exception '%', v_message
    using errcode = 'lock_not_available',
          hint = 'End that transaction or wait for it (pg_terminate_backend(pid) ends a session), then retry; lock_timeout sets how long pgflow waits (30 s when unset).';
end;
$$;

-- ---- sql/schema/functions/locks/_lock_row.sql
-- Locks the row p_lock_name of pgflow.locks until the end of the transaction, creating it on
-- first use; p_what names the lock in a timeout error ('the definition lock of flow "orders"').
-- A name longer than 200 characters (no valid slug is) is keyed by its first 160 and its md5,
-- so any input fits an index row and distinct names keep distinct locks.
-- The wait is bounded (_bound_lock_waits); a timeout names the holder (_raise_lock_timeout).
-- Reentrant: a transaction holding the row locks it again at once.
-- Locks: the row (FOR UPDATE), nothing else.
-- Called by: _lock_flow_alias, _lock_flow_definition.
create or replace function pgflow._lock_row(p_lock_name text, p_what text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_since timestamptz := clock_timestamp();
  v_key text := case when length(p_lock_name) <= 200 then p_lock_name
                     else left(p_lock_name, 160) || ':' || md5(p_lock_name) end;
  v_restore text;
begin
  v_restore := pgflow._bound_lock_waits();
  insert into pgflow.locks (lock_name) values (v_key) on conflict do nothing;
  perform 1 from pgflow.locks l where l.lock_name = v_key for update;
  perform set_config('lock_timeout', v_restore, true);
exception when lock_not_available then
  perform pgflow._raise_lock_timeout(p_what, (select l.xmax from pgflow.locks l where l.lock_name = v_key),
                                     'pgflow.locks', v_since);
end;
$$;

-- ---- sql/schema/functions/locks/_lock_flow_definition.sql
-- Serialises definition changes of one flow: lock order position 1 (sql/schema/README.md). The
-- lock is the row 'flow:<lower(flow_slug)>' of pgflow.locks (_lock_row: a bounded wait, a
-- timeout names the holder), so case aliases ("Orders", "orders") queue behind each other.
-- Transaction-scoped and reentrant: ensure_flow_compiled -> create_flow -> add_step hold it
-- once.
-- Called by: create_flow, add_step, ensure_flow_compiled, delete_flow_and_data,
-- activate_flow_version.
create or replace function pgflow._lock_flow_definition(flow_slug text) returns void
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  select pgflow._lock_row('flow:' || lower(flow_slug),
                          format('the definition lock of flow "%s"', flow_slug))
$$;

-- ---- sql/schema/functions/locks/_lock_flow_alias.sql
-- Serialises changes of one alias: its membership checks, its active pointer (first member,
-- compare-and-swap activation) and the deletion of its members. Lock order position 0: taken
-- before the concrete flow's definition lock (sql/schema/README.md). The lock is the row
-- 'alias:<lower(flow_alias)>' of pgflow.locks (_lock_row: a bounded wait, a timeout names the
-- holder), so case aliases queue behind each other.
-- Called by: _create_flow, ensure_flow_compiled, activate_flow_version, delete_flow_and_data.
create or replace function pgflow._lock_flow_alias(flow_alias text) returns void
language sql volatile
set search_path = pg_catalog, pg_temp
as $$
  select pgflow._lock_row('alias:' || lower(flow_alias),
                          format('the lock of flow alias "%s"', flow_alias))
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
                                                       flow_alias text default null)
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
  v_status text;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  perform pgflow._validate_flow_shape(shape);
  -- Shapes of older upstream DSL versions omit some step fields: compile and compare them
  -- with upstream's defaults.
  shape := pgflow._with_shape_defaults(shape);
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
      -- (As the owner: the login must be one that may delete the runs this recompilation
      -- deletes, as before this function ran with its caller's rights.)
      if not has_table_privilege(session_user, 'pgflow.runs', 'DELETE') then
        raise exception 'Flow "%" differs from the deployed definition; recompiling it on this local database deletes its runs, which role "%" may not delete (develop as the owner of schema pgflow)',
          ensure_flow_compiled.flow_slug, session_user using errcode = 'insufficient_privilege';
      end if;
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
  perform set_config('lock_timeout', v_restore, true);
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
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('a lock while compiling flow "%s"', ensure_flow_compiled.flow_slug),
                                     null, null, v_since, v_error);
end;
$$;

-- SECURITY DEFINER: nobody calls it unless granted (sql/contrib/grants.sql grants it to
-- pgflow_worker).
revoke execute on function pgflow.ensure_flow_compiled(text, jsonb, int, text, jsonb, text) from public;

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
  perform set_config('lock_timeout', v_restore, true);
  return v_row;
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('the row of flow alias "%s"', activate_flow_version.flow_alias),
                                     null, 'pgflow.flow_aliases', v_since, v_error);
end;
$$;

-- ---- sql/schema/functions/definitions/delete_flow_and_data.sql
-- Deletes a flow with all its runs and its private queues, in one transaction: the alias rules
-- first, then _delete_flow_contents (seed 000's steps 1-4), then the flow row last (step 5).
-- Alias rules (seed 004): an inactive version can be deleted; the active version cannot while
-- its alias has other versions (activate another one first); the sole version of an alias is
-- deleted together with the alias - for a self-alias (a plain flow) by default, for a named
-- alias only with p_remove_alias => true, because callers start that alias. Destructive: for
-- operators and development.
-- Locks: alias lock -> definition lock -> alias row -> flow row -> runs -> queues; every wait
-- is bounded (_bound_lock_waits) and a timeout names the holder.
-- Called by: operators.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text, p_remove_alias boolean default false)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_since timestamptz := clock_timestamp();
  v_restore text := pgflow._bound_lock_waits();
  v_error text;
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
  perform set_config('lock_timeout', v_restore, true);
exception when lock_not_available then
  get stacked diagnostics v_error = message_text;
  perform pgflow._raise_lock_timeout(format('a lock while deleting flow "%s"', p_flow_slug),
                                     null, null, v_since, v_error);
end;
$$;

-- ---- sql/schema/functions/queues/_create_queue.sql
-- Creates a generated queue for the definition this transaction persists, and makes sure this
-- transaction created it. pgmq.create() is idempotent, so a queue someone else created
-- meanwhile (its pgmq.meta row carries another transaction's start time) or an alias row for
-- the same tables is refused, never adopted.
-- SECURITY DEFINER: queues are created by, and owned by, the owner of schema pgflow (the role
-- that ran `pgflow migrate`), never by the worker compiling a flow - a worker needs no CREATE on
-- schema pgmq, and with the pgmq extension only the extension's owner can add queue tables to
-- it. Only queue names pgflow derives from an existing flow (lower(flow_slug), or a step queue
-- lower(flow_slug) || '__' || ...) are created. Its callers run as the owner too (the worker
-- compiles through ensure_flow_compiled, SECURITY DEFINER since schema 0012), so no other role
-- needs EXECUTE.
-- Locks: pgmq.meta and the queue's new tables (pgmq.create). The caller holds the flow's
-- definition lock and has checked that nothing holds the name.
-- Called by: _provision_flow_queue, _create_flow_from_shape (step queues).
create or replace function pgflow._create_queue(p_queue_name text) returns void
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
begin
  if not exists (select 1 from pgflow.flows f
                 where p_queue_name = lower(f.flow_slug)
                    or starts_with(p_queue_name, lower(f.flow_slug) || '__')) then
    raise exception 'PGMQ queue "%" is not the queue of a pgflow flow; pgflow creates only its flows'' queues', p_queue_name
      using errcode = 'insufficient_privilege';
  end if;
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

-- SECURITY DEFINER: runs as the schema owner, so nobody else calls it.
revoke execute on function pgflow._create_queue(text) from public;

-- ---- sql/schema/functions/workers/_pause_worker_function.sql
-- Pauses a worker function: its workers stop claiming (claim_tasks) and new ones are refused at
-- registration (register_worker) until an operator runs resume_worker_function.
-- One way on purpose: SECURITY DEFINER, so a role may be given the power to pause (EXECUTE)
-- without the power to resume (UPDATE on paused_at). Since schema 0012 claim_tasks runs as the
-- owner, so the worker role needs neither, and a worker that paused its function cannot lift
-- the pause itself. A pause already in place gets the newer reason and time.
-- Locks: the worker_functions row.
-- Called by: _refuse_claim_batch, `pgflow workers pause` (operators).
create or replace function pgflow._pause_worker_function(p_function_name text, p_reason text)
returns void
language sql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
  update pgflow.worker_functions w
  set paused_at = clock_timestamp(), pause_reason = p_reason, updated_at = clock_timestamp()
  where w.function_name = p_function_name
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody else calls it.
revoke execute on function pgflow._pause_worker_function(text, text) from public;

-- ---- sql/schema/functions/workers/register_worker.sql
-- Registers a worker of this database's protocol for one flow on one queue, after
-- compilation: the flow's queue in queue mode `flow`, one step's private queue in mode `step`
-- (the worker row records that queue; its claims name the step). Refuses a worker function
-- paused by a fatal claim (see resume_worker_function) and a queue that is not on the flow's
-- route.
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
            hint = case when v_run.status = 'started' then 'Cancel it first (pgflow.cancel_run).'
                        else 'Start a new run (pgflow.start_flow) if it should run again.' end;
  end if;
  return v_run;
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
-- requeued. SECURITY DEFINER: only granted roles may call it.
-- Locks: the 'stall_recovery' row (SKIP LOCKED) -> per candidate, run FOR UPDATE SKIP LOCKED ->
-- task FOR UPDATE -> messages.
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
  update pgflow.locks l set last_completed_at = clock_timestamp() where l.lock_name = 'stall_recovery';
  return v_requeued;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.requeue_stalled_tasks() from public;

-- The worker API runs as the owner; its bodies do not change.
alter function pgflow.worker_heartbeat(uuid) security definer;
alter function pgflow.mark_worker_stopped(uuid) security definer;
alter function pgflow.claim_tasks(text, text, bigint[], uuid, text) security definer;
alter function pgflow.start_tasks(text, bigint[], uuid) security definer;
alter function pgflow.complete_task(uuid, text, int, jsonb) security definer;
alter function pgflow.complete_tasks(jsonb) security definer;
alter function pgflow.fail_task(uuid, text, int, text) security definer;
alter function pgflow.fail_tasks(jsonb) security definer;
revoke execute on function pgflow.worker_heartbeat(uuid), pgflow.mark_worker_stopped(uuid),
  pgflow.claim_tasks(text, text, bigint[], uuid, text), pgflow.start_tasks(text, bigint[], uuid),
  pgflow.complete_task(uuid, text, int, jsonb), pgflow.complete_tasks(jsonb),
  pgflow.fail_task(uuid, text, int, text), pgflow.fail_tasks(jsonb) from public;

-- Every other function keeps its body and gets the pinned search_path: all of schema pgflow
-- (including sql/contrib helpers installed by hand) and, when the bundled PGMQ layer is the one
-- installed, all of schema pgmq (the pgmq extension's functions set no search_path: they run
-- with their caller's, which is this pinned one inside pgflow).
do $pin$
declare
  v_fn regprocedure;
begin
  for v_fn in
    select p.oid::regprocedure from pg_catalog.pg_proc p
    where (p.pronamespace = 'pgflow'::regnamespace
           or (p.pronamespace = 'pgmq'::regnamespace
               and coalesce(obj_description('pgmq'::regnamespace, 'pg_namespace'), '') like 'pgflow bundled PGMQ%'
               and not exists (select 1 from pg_catalog.pg_extension e where e.extname = 'pgmq')))
      and p.prokind in ('f', 'p')
      and p.proconfig is distinct from array['search_path=pg_catalog, pg_temp']
      and not exists (select 1 from unnest(p.proconfig) c where c = 'search_path=pg_catalog, pg_temp')
    order by 1
  loop
    execute format('alter routine %s set search_path = pg_catalog, pg_temp', v_fn);
  end loop;
end
$pin$;
