-- pgflow grant script: two NOLOGIN roles holding the least a worker and a run starter need.
--
-- Optional and run by hand (never by migrations), after `pgflow migrate` and again after every
-- upgrade (new tables or functions get no privileges until then):
--     psql "$DATABASE_URL" -v ON_ERROR_STOP=1 -1 -f share/pgflow/sql/contrib/grants.sql
-- Run it as the role that ran `pgflow migrate` (the owner of schema pgflow and, for the bundled
-- PGMQ, of schema pgmq) or as a superuser; creating the roles the first time needs CREATEROLE.
-- It needs schema version 0014 or later.
-- It is idempotent: running it again changes nothing. It only adds privileges (plus the
-- PUBLIC revocations below); withdraw one with REVOKE, or remove a role with
-- `drop owned by pgflow_worker; drop role pgflow_worker;`.
-- Then give each login one role:
--     grant pgflow_worker  to my_worker_login;
--     grant pgflow_starter to my_app_login;
--
-- pgflow_worker: what pgflow::EdgeWorker runs (docs/worker.md): worker_protocol(),
--   ensure_flow_compiled(slug, shape, protocol, queue_mode, route_map, alias[, flow_control]) (verify a flow, or compile
--   a new one and initialise its alias when the alias has no active version), register_worker,
--   pgmq.read + claim_tasks, has_visible_work (0020), release_claim, complete_tasks/fail_tasks, worker_heartbeat,
--   requeue_stalled_tasks(), mark_worker_stopped, `select input from pgflow.runs` and which of
--   its tasks are still wanted (step_tasks); upstream's one-task protocol (start_tasks,
--   complete_task, fail_task) too. Since schema 0012 every function that writes is SECURITY
--   DEFINER: it runs as the owner and derives every queue it touches from the definitions, so
--   the role holds no INSERT, UPDATE or DELETE on any pgflow table - it cannot plant a step or a
--   task naming another application's queue, start runs, change a run's input, a flow's
--   options or a worker's deprecation, lift the pause of a worker function, switch an alias's
--   active version (activate_flow_version: an operator runs it as the owner), or recompile a
--   local flow destructively (develop as the owner). It reads pgflow's tables (SELECT).
--   On PGMQ it needs only what pgmq.read does: SELECT and UPDATE on the queue tables of pgflow's
--   routes (claims, results and retries touch messages as the owner).
--
-- Queues. Compiling a new flow creates its PGMQ queues with the rights of the owner of schema
--   pgflow (ensure_flow_compiled and _create_queue are SECURITY DEFINER), so every queue table is
--   created by, and owned by, that role; the worker owns nothing and needs no PGMQ DDL rights,
--   with the bundled PGMQ and with the pgmq extension alike (whose queue tables become members
--   of the extension: there the owner of schema pgflow must also be the extension's owner;
--   `pgflow migrate` creates the extension when it is missing, so it is; on a server where an
--   administrator created it, run `pgflow migrate` as that role). pgflow_worker receives SELECT
--   and UPDATE on queues created from now on through `alter default privileges for role <that
--   owner> in schema pgmq` (so queues the owner creates later for other purposes are readable
--   by pgflow_worker too: create application queues with another role to keep them from
--   workers), and on existing queues only when the script can prove they are pgflow's: a
--   step's queue that is its derived route (lower(flow_slug), or its step queue) and was created
--   together with its flow. Any other queue a step names is reported and not granted.
--   Versions of this script before 0012 granted INSERT and DELETE on queues (and before 0011
--   made the bundled pgmq.create SECURITY DEFINER); both are withdrawn.
--
-- pgflow_starter: start_flow_with_states (a run of an alias's active version),
--   start_flow_with_states_by_slug (a pinned version), their lean forms start_run and
--   start_run_by_slug (returning only the run id), the idempotent starts start_run_idempotent
--   and start_run_idempotent_by_slug (schema 0017 or later), run control (cancel_run, retry_run,
--   resume_run; set_run_priority, schema 0018 or later), send_signal (schema 0021 or later)
--   and get_run_with_states (all SECURITY DEFINER) and nothing else: no table, no queue. They run inside the caller's transaction, so
--   `select pgflow.start_flow_with_states($1, $2::jsonb)` in your own transaction starts a run
--   exactly when your data commits (Client::in_transaction does this). The invoker
--   pgflow.start_flow is deliberately not granted: it would need INSERT/UPDATE on runs,
--   step_states and step_tasks and DML on the queues, i.e. the power to forge task results.
--
-- PUBLIC. Schema pgflow grants nothing to PUBLIC. EXECUTE on a SECURITY INVOKER function is
--   no boundary (it can only do what the caller may do anyway), but on a SECURITY DEFINER
--   function it is the only one: the migrations revoke PUBLIC's EXECUTE from every SECURITY
--   DEFINER function of schema pgflow and this script does it again (and from pgmq.create),
--   granting per role, so e.g. setup_requeue_stalled_tasks_cron stays the owner's.
--
-- Supabase. When realtime.send exists the core calls it on every state change, as the owner
--   of schema pgflow (every state change runs in a SECURITY DEFINER function), which needs
--   USAGE on schema realtime, EXECUTE on realtime.send and INSERT on realtime.messages. The
--   script grants these to that owner when it may, and warns with the statements to run
--   otherwise. (Versions before 0012 granted them to pgflow_worker; they are withdrawn.)
--
-- Threat model, and what each role may and may not do: docs/security.md.
--
-- Everything is one DO block, so the script applies completely or not at all.
do $grants$
declare
  v_create_fn regprocedure;
  v_owner oid;
  v_pgmq_extension boolean;
  v_problems text[];
  v_queues text[];
  v_off_route text[];
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
                 where p.pronamespace = 'pgflow'::regnamespace and p.proname = '_lock_row') then
    raise exception 'pgflow grants: this database has a pgflow schema older than version 0012: run `pgflow migrate` first'
      using errcode = 'undefined_function';
  end if;
  if pgflow.worker_protocol() <> 6 then
    raise exception 'pgflow grants: this script is for worker protocol 6, the database speaks %: use the grants.sql shipped with your pgflow version',
      pgflow.worker_protocol() using errcode = 'feature_not_supported';
  end if;

  v_pgmq_extension := exists (select 1 from pg_catalog.pg_depend d
                              where d.classid = 'pg_catalog.pg_proc'::regclass and d.objid = v_create_fn
                                and d.deptype = 'e');
  -- The owner of the SECURITY DEFINER functions: every write of pgflow runs as this role, and
  -- queue tables are created by it (pgflow._create_queue).
  v_owner := (select p.proowner from pg_catalog.pg_proc p
              where p.oid = 'pgflow._create_queue(text)'::regprocedure);

  -- The queues the script can prove are pgflow's: the queue of a step that is that step's
  -- derived route (the flow's generated queue, or the step's private queue in queue mode
  -- `step`), and a step-less flow's generated queue created together with the flow, as
  -- pgflow.delete_flow_and_data decides. A step naming any other queue was not written by
  -- pgflow (the 0012 migration refuses such rows; only the owner could write one since), so its
  -- queue is reported and not granted. (A runner that may not read these tables is refused
  -- below for the tables themselves.)
  v_queues := '{}';
  if pg_catalog.has_table_privilege('pgflow.steps', 'SELECT')
     and pg_catalog.has_table_privilege('pgflow.flows', 'SELECT')
     and pg_catalog.has_table_privilege('pgmq.meta', 'SELECT') then
    v_queues := array(
      select s.queue_name from pgflow.steps s join pgflow.flows f on f.flow_slug = s.flow_slug
      where s.queue_name = case when f.queue_mode = 'step'
                                then pgflow._step_queue_name(s.flow_slug, s.step_slug, s.step_index)
                                else pg_catalog.lower(s.flow_slug) end
      union
      select pg_catalog.lower(f.flow_slug) from pgflow.flows f
      join pgmq.meta m on pg_catalog.lower(m.queue_name) = pg_catalog.lower(f.flow_slug) and m.created_at = f.created_at
      where f.queue_mode = 'flow'
      order by 1);
    v_off_route := array(
      select pg_catalog.format('step "%s" of flow "%s" names queue "%s"', s.step_slug, s.flow_slug, s.queue_name)
      from pgflow.steps s where s.queue_name <> all(v_queues) order by 1);
    if pg_catalog.cardinality(v_off_route) > 0 then
      raise warning 'pgflow grants: not granted (these queues are not the steps'' own routes, which pgflow never writes): %',
        pg_catalog.array_to_string(v_off_route, '; ');
    end if;
  end if;

  -- GRANT by a role without the grant option only warns ("no privileges were granted"), so
  -- check every object up front and refuse with the complete list.
  select array_agg(x.what order by x.what) into v_problems
  from (
    select pg_catalog.format('table %s', c.oid::regclass) as what
    from pg_catalog.pg_class c
    where c.relnamespace = 'pgflow'::regnamespace and c.relkind in ('r', 'p')
      and not pg_catalog.pg_has_role(c.relowner, 'USAGE')
    union all
    select pg_catalog.format('function %s', p.oid::regprocedure)
    from pg_catalog.pg_proc p
    where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
      and not pg_catalog.pg_has_role(p.proowner, 'USAGE')
    union all
    select 'schema pgflow' from pg_catalog.pg_namespace n
    where n.nspname = 'pgflow' and not pg_catalog.pg_has_role(n.nspowner, 'USAGE')
    union all
    select 'table pgmq.meta' where not pg_catalog.has_table_privilege('pgmq.meta', 'SELECT WITH GRANT OPTION')
    union all
    select pg_catalog.format('function %s (owner)', v_create_fn)
    where not v_pgmq_extension
      and (select p.prosecdef from pg_catalog.pg_proc p where p.oid = v_create_fn)
      and not pg_catalog.pg_has_role((select p.proowner from pg_catalog.pg_proc p where p.oid = v_create_fn), 'USAGE')
    union all
    select pg_catalog.format('table %s', t.rel)
    from unnest(v_queues) q,
         lateral (values (pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', 'q_' || q))),
                         (pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', 'a_' || q)))) t(rel)
    where t.rel is not null
      and not (pg_catalog.has_table_privilege(t.rel, 'SELECT WITH GRANT OPTION')
               and pg_catalog.has_table_privilege(t.rel, 'UPDATE WITH GRANT OPTION'))
  ) x;
  if v_problems is not null then
    raise exception 'pgflow grants: role "%" cannot grant on: %', current_user,
      pg_catalog.array_to_string(v_problems, ', ')
      using errcode = 'insufficient_privilege',
            hint = 'Run this script as the role that ran `pgflow migrate` (the owner of these objects) or as a superuser.';
  end if;

  -- ---- Roles ---------------------------------------------------------------------------------
  if not exists (select 1 from pg_catalog.pg_roles r where r.rolname = 'pgflow_worker') then
    create role pgflow_worker nologin;
    comment on role pgflow_worker is
      'pgflow: runs workers (claim, complete, fail, heartbeat, stall recovery, wait step timers, compile new flows). Grant it to worker logins. See sql/contrib/grants.sql.';
  end if;
  if not exists (select 1 from pg_catalog.pg_roles r where r.rolname = 'pgflow_starter') then
    create role pgflow_starter nologin;
    comment on role pgflow_starter is
      'pgflow: starts, cancels, retries and resumes runs, signals their wait steps and reads their state (start_flow_with_states[_by_slug], start_run[_by_slug], start_run_idempotent[_by_slug], cancel_run, retry_run, resume_run, send_signal, get_run_with_states). Grant it to application logins. See sql/contrib/grants.sql.';
  end if;
  -- Existing roles are left as they are, but a group role that can log in is a mistake.
  if exists (select 1 from pg_catalog.pg_roles r
             where r.rolname in ('pgflow_worker', 'pgflow_starter') and r.rolcanlogin) then
    raise warning 'pgflow grants: pgflow_worker / pgflow_starter should be NOLOGIN group roles; grant them to login roles instead (alter role ... nologin)';
  end if;

  -- ---- PUBLIC: EXECUTE is the boundary of SECURITY DEFINER functions ---------------------------
  for v_fn in select p.oid::regprocedure from pg_catalog.pg_proc p
              where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1 loop
    execute pg_catalog.format('revoke execute on function %s from public', v_fn);
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
  -- The idempotent starts (schema 0017 or later; the script serves 0014 onwards), run
  -- priorities (0018 or later) and signals to wait steps (0021 or later).
  for v_fn in select p.oid::regprocedure from pg_catalog.pg_proc p
              where p.pronamespace = 'pgflow'::regnamespace
                and p.proname in ('start_run_idempotent', 'start_run_idempotent_by_slug',
                                  'set_run_priority', 'send_signal') order by 1 loop
    execute pg_catalog.format('grant execute on function %s to pgflow_starter', v_fn);
  end loop;

  -- ---- pgflow_worker: pgflow ------------------------------------------------------------------
  grant usage on schema pgflow to pgflow_worker;
  -- Reads only: every write goes through the SECURITY DEFINER worker API below. (Withdraws the
  -- table and column writes versions of this script before 0012 granted.)
  revoke insert, update, delete, truncate, references, trigger on all tables in schema pgflow from pgflow_worker;
  grant select on pgflow.flows, pgflow.flow_aliases, pgflow.steps, pgflow.deps, pgflow.runs,
                  pgflow.step_states, pgflow.step_tasks, pgflow.workers, pgflow.worker_functions,
                  pgflow.locks to pgflow_worker;
  -- The concurrency limits and run priorities (schema 0018 or later), key values (0019).
  for v_rel in select c.oid::regclass from pg_catalog.pg_class c
              where c.relnamespace = 'pgflow'::regnamespace
                and c.relname in ('concurrency_gates', 'step_concurrency_limits', 'run_priorities',
                                  'concurrency_keys') order by 1 loop
    execute pg_catalog.format('grant select on %s to pgflow_worker', v_rel);
  end loop;
  -- The worker's deployment: ensure_flow_compiled with a queue mode, route and alias (schema
  -- 0014 to 0017), and with flow control too (0018 or later). Upstream 0.16.0's two-argument
  -- signature is not granted: it only refuses the worker.
  for v_fn in select p.oid::regprocedure from pg_catalog.pg_proc p
              where p.pronamespace = 'pgflow'::regnamespace and p.proname = 'ensure_flow_compiled'
                and p.pronargs >= 6 order by 1 loop
    execute pg_catalog.format('grant execute on function %s to pgflow_worker', v_fn);
  end loop;
  grant execute on function pgflow.register_worker(uuid, text, text, text, int),
                            pgflow.claim_tasks(text, text, bigint[], uuid, text),
                            pgflow.claim_tasks(text, text, bigint[], uuid, text, uuid),
                            pgflow.release_claim(uuid, uuid),
                            pgflow.complete_tasks(jsonb),
                            pgflow.fail_tasks(jsonb),
                            pgflow.start_tasks(text, bigint[], uuid),
                            pgflow.complete_task(uuid, text, int, jsonb),
                            pgflow.fail_task(uuid, text, int, text),
                            pgflow.worker_heartbeat(uuid),
                            pgflow.mark_worker_stopped(uuid),
                            pgflow.requeue_stalled_tasks() to pgflow_worker;
  -- Schema 0020: a poll-only worker's look at its idle queue.
  if pg_catalog.to_regprocedure('pgflow.has_visible_work(uuid)') is not null then
    grant execute on function pgflow.has_visible_work(uuid) to pgflow_worker;
  end if;
  -- Schema 0021: the timers of wait steps (a worker's maintenance loop fires them). Sending
  -- signals is the starter's: a worker alone cannot complete a wait step.
  if pg_catalog.to_regprocedure('pgflow.wake_waiting_tasks(int)') is not null then
    grant execute on function pgflow.wake_waiting_tasks(int) to pgflow_worker;
  end if;
  -- (Versions before 0012 granted these; the worker API now calls them as the owner.)
  revoke execute on function pgflow._create_queue(text), pgflow._pause_worker_function(text, text)
    from pgflow_worker;

  -- ---- pgflow_worker: PGMQ --------------------------------------------------------------------
  grant usage on schema pgmq to pgflow_worker;
  grant select on pgmq.meta to pgflow_worker;
  -- Withdraw what earlier versions granted on queue tables (inserts, deletes, archives, and
  -- queues this version cannot prove are pgflow's) wherever this role may; then pgmq.read's
  -- SELECT and UPDATE on the queues of pgflow's routes.
  for v_rel in select c.oid::regclass from pg_catalog.pg_class c
               where c.relnamespace = 'pgmq'::regnamespace and c.relkind in ('r', 'p')
                 and c.oid <> 'pgmq.meta'::regclass
                 and pg_catalog.pg_has_role(c.relowner, 'USAGE')
                 and exists (select 1 from pg_catalog.aclexplode(c.relacl) a
                             where a.grantee = 'pgflow_worker'::regrole)
               order by 1 loop
    execute pg_catalog.format('revoke all on %s from pgflow_worker', v_rel);
  end loop;
  foreach v_queue in array v_queues loop
    v_rel := pg_catalog.to_regclass(pg_catalog.format('pgmq.%I', 'q_' || v_queue));
    if v_rel is not null then
      execute pg_catalog.format('grant select, update on %s to pgflow_worker', v_rel);
    end if;
  end loop;
  -- Queues created from now on (by the owner; see "Queues" above).
  if pg_catalog.pg_has_role(v_owner, 'MEMBER') then
    execute pg_catalog.format('alter default privileges for role %I in schema pgmq '
                              'revoke insert, delete on tables from pgflow_worker',
                              pg_catalog.pg_get_userbyid(v_owner));
    execute pg_catalog.format('alter default privileges for role %I in schema pgmq '
                              'grant select, update on tables to pgflow_worker',
                              pg_catalog.pg_get_userbyid(v_owner));
  else
    raise notice 'pgflow grants: queues created later by role "%" will not be usable by pgflow_worker until this script runs again (or that role runs: alter default privileges in schema pgmq grant select, update on tables to pgflow_worker)',
      pg_catalog.pg_get_userbyid(v_owner);
  end if;
  -- Undo what versions of this script before 0011 did to the bundled pgmq.create.
  if not v_pgmq_extension and (select p.prosecdef from pg_catalog.pg_proc p where p.oid = v_create_fn) then
    alter function pgmq."create"(text) security invoker;
    revoke execute on function pgmq."create"(text) from pgflow_worker;
    grant execute on function pgmq."create"(text) to public;
  end if;

  -- ---- Supabase realtime: the owner broadcasts --------------------------------------------------
  -- (Catalog lookups again: this role may lack USAGE on schema realtime.)
  if pg_catalog.to_regnamespace('realtime') is not null then
    v_fn := (select p.oid::regprocedure from pg_catalog.pg_proc p
             where p.pronamespace = 'realtime'::regnamespace and p.proname = 'send'
               and p.proargtypes = '3802 25 25 16'::oidvector);  -- (jsonb, text, text, boolean)
    v_rel := (select c.oid from pg_catalog.pg_class c
              where c.relnamespace = 'realtime'::regnamespace and c.relname = 'messages'
                and c.relkind in ('r', 'p'));
    if not (pg_catalog.has_schema_privilege(v_owner, 'realtime', 'USAGE')
            and (v_fn is null or pg_catalog.has_function_privilege(v_owner, v_fn, 'EXECUTE'))
            and (v_rel is null or pg_catalog.has_table_privilege(v_owner, v_rel, 'INSERT'))) then
      -- (GRANT without the grant option only warns: check first.)
      if pg_catalog.has_schema_privilege('realtime', 'USAGE WITH GRANT OPTION')
         and (v_fn is null or pg_catalog.has_function_privilege(v_fn, 'EXECUTE WITH GRANT OPTION'))
         and (v_rel is null or pg_catalog.has_table_privilege(v_rel, 'INSERT WITH GRANT OPTION')) then
        execute pg_catalog.format('grant usage on schema realtime to %I', pg_catalog.pg_get_userbyid(v_owner));
        if v_fn is not null then
          execute pg_catalog.format('grant execute on function %s to %I', v_fn, pg_catalog.pg_get_userbyid(v_owner));
        end if;
        if v_rel is not null then
          execute pg_catalog.format('grant insert on %s to %I', v_rel, pg_catalog.pg_get_userbyid(v_owner));
        end if;
      else
        raise warning '%', pg_catalog.format(
          'pgflow grants: role "%s" cannot grant on schema realtime: every state change fails until the owner of schema realtime runs: grant usage on schema realtime to %I; grant execute on function realtime.send(jsonb, text, text, boolean) to %I; grant insert on realtime.messages to %I;',
          current_user, pg_catalog.pg_get_userbyid(v_owner), pg_catalog.pg_get_userbyid(v_owner),
          pg_catalog.pg_get_userbyid(v_owner));
      end if;
    end if;
    -- Versions before 0012 granted these to pgflow_worker, which no longer calls realtime.send.
    if pg_catalog.has_schema_privilege('realtime', 'USAGE WITH GRANT OPTION') then
      revoke usage on schema realtime from pgflow_worker;
    end if;
    if v_fn is not null and pg_catalog.has_function_privilege(v_fn, 'EXECUTE WITH GRANT OPTION') then
      execute pg_catalog.format('revoke execute on function %s from pgflow_worker', v_fn);
    end if;
    if v_rel is not null and pg_catalog.has_table_privilege(v_rel, 'INSERT WITH GRANT OPTION') then
      execute pg_catalog.format('revoke insert on %s from pgflow_worker', v_rel);
    end if;
  end if;
end
$grants$;
