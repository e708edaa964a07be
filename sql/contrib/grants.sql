-- pgflow grant script: two NOLOGIN roles holding the least a worker and a run starter need.
--
-- Optional and run by hand (never by migrations), after `pgflow migrate` and again after every
-- upgrade (new tables or functions get no privileges until then):
--     psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -1 -f share/pgflow/sql/contrib/grants.sql
-- Run it as the role that ran `pgflow migrate` (the owner of schema pgflow and, for the bundled
-- PGMQ, of schema pgmq) or as a superuser; creating the roles the first time needs CREATEROLE.
-- It needs schema version 0011 or later.
-- It is idempotent: running it again changes nothing. It only adds privileges (plus the
-- PUBLIC revocations below); withdraw one with REVOKE, or remove a role with
-- `drop owned by pgflow_worker; drop role pgflow_worker;`.
-- Then give each login one role:
--     grant pgflow_worker  to my_worker_login;
--     grant pgflow_starter to my_app_login;
--
-- pgflow_worker: what pgflow::EdgeWorker runs (docs/worker.md): worker_protocol(),
--   ensure_flow_compiled(slug, shape, 5, queue_mode, route_map, alias) (verify a flow, or compile
--   a new one and initialise its alias when the alias has no active version),
--   register_worker,
--   pgmq.read + claim_tasks, complete_tasks/fail_tasks, worker_heartbeat,
--   requeue_stalled_tasks() (SECURITY DEFINER), mark_worker_stopped, and
--   `select input from pgflow.runs`. Every one of these runs with the caller's rights except
--   stall recovery, queue creation and pausing (below), so the role holds table privileges:
--   SELECT on pgflow's tables; INSERT
--   where compiling, registering and starting steps write (flows, flow_aliases, steps, deps,
--   step_tasks, workers, worker_functions); UPDATE only on the columns the runtime changes. It has no
--   DELETE anywhere in pgflow, cannot insert runs (so it cannot start flows), cannot change a
--   run's input, a flow's options, or a worker's deprecated_at, cannot lift the pause of a
--   worker function (a fatal claim pauses it through the SECURITY DEFINER
--   _pause_worker_function; resume_worker_function needs UPDATE on paused_at, which only the
--   owner has), cannot switch an alias's active
--   version (activate_flow_version needs UPDATE on flow_aliases: an operator runs it as the
--   owner), and cannot recompile a local flow destructively (delete_flow_and_data needs
--   DELETE: develop as the owner).
--
-- Queues. Compiling a new flow creates its PGMQ queues. The worker must not own them: the
--   owner's SECURITY DEFINER functions (start_flow_with_states, stall recovery) write into
--   them, and whoever owns a table can attach triggers or defaults that then run with the
--   writer's rights. So queues are created by pgflow._create_queue, SECURITY DEFINER since
--   schema 0011 (pinned search_path, EXECUTE for its owner and pgflow_worker only, and only for
--   names derived from a pgflow flow): every queue table is created by, and owned by, the owner
--   of schema pgflow, and pgflow_worker receives DML on them through
--   `alter default privileges for role <that owner> in schema pgmq`. The worker gets no CREATE
--   on any schema, owns nothing and needs no PGMQ function beyond the invoker ones every role
--   may call. This works the same with the bundled PGMQ and with the pgmq extension, whose
--   queue tables become members of the extension: there the owner of schema pgflow must also
--   be the extension's owner (`pgflow migrate` creates the extension when it is missing, so
--   it is; on a server where an administrator created it, run `pgflow migrate` as that role).
--   Queues of flows compiled before this script ran are granted explicitly; queues the owner
--   creates later for other purposes are usable by pgflow_worker too (create application
--   queues with another role to keep them from workers). Versions of this script before 0011
--   made the bundled pgmq.create SECURITY DEFINER instead; it is put back as PGMQ ships it.
--
-- pgflow_starter: start_flow_with_states (a run of an alias's active version),
--   start_flow_with_states_by_slug (a pinned version), their lean forms start_run and
--   start_run_by_slug (returning only the run id), run control (cancel_run, retry_run,
--   resume_run) and get_run_with_states (all SECURITY DEFINER) and nothing else: no table,
--   no queue. They run inside the caller's transaction, so
--   `select pgflow.start_flow_with_states($1, $2::jsonb)` in your own transaction starts a run
--   exactly when your data commits (Client::in_transaction does this). The invoker
--   pgflow.start_flow is deliberately not granted: it would need INSERT/UPDATE on runs,
--   step_states and step_tasks and DML on the queues, i.e. the power to forge task results.
--
-- PUBLIC. Schema pgflow grants nothing to PUBLIC. EXECUTE on a SECURITY INVOKER function is
--   no boundary (it can only do what the caller may do anyway), but on a SECURITY DEFINER
--   function it is the only one: this script revokes PUBLIC's EXECUTE from every SECURITY
--   DEFINER function of schema pgflow (and from pgmq.create) and grants it per role, so e.g.
--   setup_requeue_stalled_tasks_cron stays the owner's.
--
-- Supabase. When realtime.send exists the core calls it on every state change, which needs
--   USAGE on schema realtime, EXECUTE on realtime.send and INSERT on realtime.messages. The
--   script grants these when it may, and warns with the statements to run otherwise.
--
-- Everything is one DO block, so the script applies completely or not at all.
do $grants$
declare
  v_create_fn regprocedure;
  v_queue_owner oid;
  v_pgmq_extension boolean;
  v_problems text[];
  v_queues text[];
  v_queue text;
  v_fn regprocedure;
  v_rel regclass;
begin
  -- ---- Preconditions -------------------------------------------------------------------------
  -- (Catalog lookups: to_regprocedure would fail without USAGE on the schema.)
  v_create_fn := (select p.oid from pg_catalog.pg_proc p
                  where p.pronamespace = pg_catalog.to_regnamespace('pgmq') and p.proname = 'create'
                    and p.proargtypes = '25'::oidvector);  -- pgmq.create(text)
  if v_create_fn is null or not exists (
       select 1 from pg_catalog.pg_proc p
       where p.pronamespace = pg_catalog.to_regnamespace('pgflow') and p.proname = 'worker_protocol') then
    raise exception 'pgflow grants: this database has no pgflow schema of version 0002 or later (or no PGMQ): run `pgflow migrate` first'
      using errcode = 'undefined_function';
  end if;
  if not (pg_catalog.has_schema_privilege('pgflow', 'USAGE WITH GRANT OPTION')
          and pg_catalog.has_schema_privilege('pgmq', 'USAGE WITH GRANT OPTION')) then
    raise exception 'pgflow grants: role "%" cannot grant on: schema pgflow, schema pgmq', current_user
      using errcode = 'insufficient_privilege',
            hint = 'Run this script as the role that ran `pgflow migrate` (the owner of these objects) or as a superuser.';
  end if;
  if not exists (select 1 from pg_catalog.pg_proc p
                 where p.pronamespace = 'pgflow'::regnamespace and p.proname = '_pause_worker_function') then
    raise exception 'pgflow grants: this database has a pgflow schema older than version 0011: run `pgflow migrate` first'
      using errcode = 'undefined_function';
  end if;
  if pgflow.worker_protocol() <> 5 then
    raise exception 'pgflow grants: this script is for worker protocol 5, the database speaks %: use the grants.sql shipped with your pgflow version',
      pgflow.worker_protocol() using errcode = 'feature_not_supported';
  end if;

  v_pgmq_extension := exists (select 1 from pg_catalog.pg_depend d
                              where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = v_create_fn
                                and d.deptype = 'e');
  -- Queue tables are created by pgflow._create_queue, with its owner's rights.
  v_queue_owner := (select p.proowner from pg_catalog.pg_proc p
                    where p.oid = 'pgflow._create_queue(text)'::regprocedure);

  -- The queues on pgflow's routes: every step's queue, and a flow's generated queue when the
  -- flow owns it (created together with the flow), as pgflow.delete_flow_and_data decides.
  -- (A runner that may not read these tables is refused below for the tables themselves.)
  v_queues := '{}';
  if pg_catalog.has_table_privilege('pgflow.steps', 'SELECT')
     and pg_catalog.has_table_privilege('pgflow.flows', 'SELECT')
     and pg_catalog.has_table_privilege('pgmq.meta', 'SELECT') then
    v_queues := array(
      select s.queue_name from pgflow.steps s
      union
      select lower(f.flow_slug) from pgflow.flows f
      join pgmq.meta m on lower(m.queue_name) = lower(f.flow_slug) and m.created_at = f.created_at
      order by 1);
  end if;

  -- GRANT by a role without the grant option only warns ("no privileges were granted"), so
  -- check every object up front and refuse with the complete list.
  select array_agg(x.what order by x.what) into v_problems
  from (
    select format('table %s', c.oid::regclass) as what
    from pg_catalog.pg_class c
    where c.relnamespace = 'pgflow'::regnamespace and c.relkind in ('r', 'p')
      and not pg_catalog.pg_has_role(c.relowner, 'USAGE')
    union all
    select format('function %s', p.oid::regprocedure)
    from pg_catalog.pg_proc p
    where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
      and not pg_catalog.pg_has_role(p.proowner, 'USAGE')
    union all
    select 'schema pgflow' from pg_catalog.pg_namespace n
    where n.nspname = 'pgflow' and not pg_catalog.pg_has_role(n.nspowner, 'USAGE')
    union all
    select 'table pgmq.meta' where not pg_catalog.has_table_privilege('pgmq.meta', 'SELECT WITH GRANT OPTION')
    union all
    select format('function %s (owner)', v_create_fn)
    where not v_pgmq_extension
      and (select p.prosecdef from pg_catalog.pg_proc p where p.oid = v_create_fn)
      and not pg_catalog.pg_has_role((select p.proowner from pg_catalog.pg_proc p where p.oid = v_create_fn), 'USAGE')
    union all
    select format('table %s', t.rel)
    from unnest(v_queues) q,
         lateral (values (pg_catalog.to_regclass(format('pgmq.%I', 'q_' || q))),
                         (pg_catalog.to_regclass(format('pgmq.%I', 'a_' || q)))) t(rel)
    where t.rel is not null
      and not (pg_catalog.has_table_privilege(t.rel, 'SELECT WITH GRANT OPTION')
               and pg_catalog.has_table_privilege(t.rel, 'INSERT WITH GRANT OPTION')
               and pg_catalog.has_table_privilege(t.rel, 'UPDATE WITH GRANT OPTION')
               and pg_catalog.has_table_privilege(t.rel, 'DELETE WITH GRANT OPTION'))
  ) x;
  if v_problems is not null then
    raise exception 'pgflow grants: role "%" cannot grant on: %', current_user,
      array_to_string(v_problems, ', ')
      using errcode = 'insufficient_privilege',
            hint = 'Run this script as the role that ran `pgflow migrate` (the owner of these objects) or as a superuser.';
  end if;

  -- ---- Roles ---------------------------------------------------------------------------------
  if not exists (select 1 from pg_catalog.pg_roles r where r.rolname = 'pgflow_worker') then
    create role pgflow_worker nologin;
    comment on role pgflow_worker is
      'pgflow: runs workers (claim, complete, fail, heartbeat, stall recovery, compile new flows). Grant it to worker logins. See sql/contrib/grants.sql.';
  end if;
  if not exists (select 1 from pg_catalog.pg_roles r where r.rolname = 'pgflow_starter') then
    create role pgflow_starter nologin;
    comment on role pgflow_starter is
      'pgflow: starts, cancels, retries and resumes runs and reads their state (start_flow_with_states[_by_slug], start_run[_by_slug], cancel_run, retry_run, resume_run, get_run_with_states). Grant it to application logins. See sql/contrib/grants.sql.';
  end if;
  -- Existing roles are left as they are, but a group role that can log in is a mistake.
  if exists (select 1 from pg_catalog.pg_roles r
             where r.rolname in ('pgflow_worker', 'pgflow_starter') and r.rolcanlogin) then
    raise warning 'pgflow grants: pgflow_worker / pgflow_starter should be NOLOGIN group roles; grant them to login roles instead (alter role ... nologin)';
  end if;

  -- ---- PUBLIC: EXECUTE is the boundary of SECURITY DEFINER functions ---------------------------
  for v_fn in select p.oid::regprocedure from pg_catalog.pg_proc p
              where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1 loop
    execute format('revoke execute on function %s from public', v_fn);
  end loop;

  -- ---- pgflow_starter -------------------------------------------------------------------------
  grant usage on schema pgflow to pgflow_starter;
  grant execute on function pgflow.start_flow_with_states(text, jsonb, uuid),
                            pgflow.start_flow_with_states_by_slug(text, jsonb, uuid),
                            pgflow.start_run(text, jsonb, uuid),
                            pgflow.start_run_by_slug(text, jsonb, uuid),
                            pgflow.cancel_run(uuid, text),
                            pgflow.retry_run(uuid, uuid),
                            pgflow.resume_run(uuid),
                            pgflow.get_run_with_states(uuid) to pgflow_starter;

  -- ---- pgflow_worker: pgflow ------------------------------------------------------------------
  grant usage on schema pgflow to pgflow_worker;
  -- Definitions: ensure_flow_compiled verifies, or compiles a new flow (and gives an alias
  -- without an active version its first member).
  grant select, insert on pgflow.flows, pgflow.flow_aliases, pgflow.steps, pgflow.deps to pgflow_worker;
  -- (created_at: verifying a step-less flow; queue_mode: compiling a step-queued flow)
  grant update (created_at, queue_mode) on pgflow.flows to pgflow_worker;
  -- Runtime: claims, results, retries, conditions, cascades, starting dependent steps.
  grant select on pgflow.runs, pgflow.step_states, pgflow.step_tasks to pgflow_worker;
  grant update (status, output, remaining_steps, completed_at, failed_at)
    on pgflow.runs to pgflow_worker;
  grant update (status, remaining_deps, initial_tasks, remaining_tasks, output, error_message,
                skip_reason, started_at, completed_at, failed_at, skipped_at)
    on pgflow.step_states to pgflow_worker;
  grant insert on pgflow.step_tasks to pgflow_worker;
  grant update (status, attempts_count, output, error_message, last_worker_id, started_at,
                completed_at, failed_at)
    on pgflow.step_tasks to pgflow_worker;
  -- Registration, heartbeats, stopping; a fatal claim pauses the worker's function, through
  -- _pause_worker_function only (one way: the columns of the pause are not the worker's, so it
  -- cannot resume; versions of this script before 0011 granted them).
  grant select, insert on pgflow.workers, pgflow.worker_functions to pgflow_worker;
  grant update (last_heartbeat_at, stopped_at) on pgflow.workers to pgflow_worker;
  grant update (updated_at) on pgflow.worker_functions to pgflow_worker;
  revoke update (paused_at, pause_reason) on pgflow.worker_functions from pgflow_worker;
  grant execute on function pgflow.requeue_stalled_tasks(), pgflow._create_queue(text),
                            pgflow._pause_worker_function(text, text) to pgflow_worker;

  -- ---- pgflow_worker: PGMQ --------------------------------------------------------------------
  grant usage on schema pgmq to pgflow_worker;
  grant select on pgmq.meta to pgflow_worker;
  -- Queues that already exist: a queue table gets read, sent to, re-timed and archived from;
  -- its archive only receives.
  foreach v_queue in array v_queues loop
    v_rel := pg_catalog.to_regclass(format('pgmq.%I', 'q_' || v_queue));
    if v_rel is not null then
      execute format('grant select, insert, update, delete on %s to pgflow_worker', v_rel);
    end if;
    v_rel := pg_catalog.to_regclass(format('pgmq.%I', 'a_' || v_queue));
    if v_rel is not null then
      execute format('grant select, insert on %s to pgflow_worker', v_rel);
    end if;
  end loop;
  -- Queues created from now on (by pgflow._create_queue's owner; see "Queues" above).
  if pg_catalog.pg_has_role(v_queue_owner, 'MEMBER') then
    execute format('alter default privileges for role %I in schema pgmq '
                   'grant select, insert, update, delete on tables to pgflow_worker',
                   pg_catalog.pg_get_userbyid(v_queue_owner));
  else
    raise notice 'pgflow grants: queues created later by role "%" will not be usable by pgflow_worker until this script runs again (or that role runs: alter default privileges in schema pgmq grant select, insert, update, delete on tables to pgflow_worker)',
      pg_catalog.pg_get_userbyid(v_queue_owner);
  end if;
  -- Undo what versions of this script before 0011 did to the bundled pgmq.create.
  if not v_pgmq_extension and (select p.prosecdef from pg_catalog.pg_proc p where p.oid = v_create_fn) then
    alter function pgmq."create"(text) security invoker;
    revoke execute on function pgmq."create"(text) from pgflow_worker;
    grant execute on function pgmq."create"(text) to public;
  end if;

  -- ---- pgflow_worker: Supabase realtime -------------------------------------------------------
  -- (Catalog lookups again: this role may lack USAGE on schema realtime.)
  if pg_catalog.to_regnamespace('realtime') is not null then
    v_fn := (select p.oid::regprocedure from pg_catalog.pg_proc p
             where p.pronamespace = 'realtime'::regnamespace and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::oidvector);  -- (jsonb, text, text, boolean)
    v_rel := (select c.oid from pg_catalog.pg_class c
              where c.relnamespace = 'realtime'::regnamespace and c.relname = 'messages'
                and c.relkind in ('r', 'p'));
    -- (GRANT without the grant option only warns: check first.)
    if pg_catalog.has_schema_privilege('realtime', 'USAGE WITH GRANT OPTION')
       and (v_fn is null or pg_catalog.has_function_privilege(v_fn, 'EXECUTE WITH GRANT OPTION'))
       and (v_rel is null or pg_catalog.has_table_privilege(v_rel, 'INSERT WITH GRANT OPTION')) then
      grant usage on schema realtime to pgflow_worker;
      if v_fn is not null then
        execute format('grant execute on function %s to pgflow_worker', v_fn);
      end if;
      if v_rel is not null then
        execute format('grant insert on %s to pgflow_worker', v_rel);
      end if;
    else
      raise warning 'pgflow grants: role "%" cannot grant on schema realtime: workers fail on every state change until the owner of schema realtime runs: grant usage on schema realtime to pgflow_worker; grant execute on function realtime.send(jsonb, text, text, boolean) to pgflow_worker; grant insert on realtime.messages to pgflow_worker;',
        current_user;
    end if;
  end if;
end
$grants$;
