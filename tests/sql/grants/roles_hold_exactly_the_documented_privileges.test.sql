-- The complete privilege set of both roles, so that any grant added later is a visible,
-- deliberate change: NOLOGIN group roles with no attributes or memberships that own nothing;
-- the worker reads pgflow's tables and writes none (every write goes through its SECURITY
-- DEFINER API); each role's schemas and functions; PUBLIC kept off the SECURITY DEFINER
-- functions; queue creation running as the owner; PGMQ as it ships (the bundled layer or the
-- extension, whichever the template has).
begin;
select plan(20);

\i _install_as_owner.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;

-- Every table and column privilege a role holds in this database, as 'relation(column): PRIV'.
create function pg_temp.table_privileges(p_role name) returns setof text language sql stable as $$
  select format('%s: %s', c.oid::regclass, a.privilege_type)
  from pg_class c, aclexplode(c.relacl) a
  where a.grantee = p_role::regrole
  union all
  select format('%s(%s): %s', c.oid::regclass, att.attname, a.privilege_type)
  from pg_attribute att join pg_class c on c.oid = att.attrelid, aclexplode(att.attacl) a
  where a.grantee = p_role::regrole
  order by 1
$$;
create function pg_temp.other_privileges(p_role name) returns setof text language sql stable as $$
  select format('schema %s: %s', n.nspname, a.privilege_type)
  from pg_namespace n, aclexplode(n.nspacl) a where a.grantee = p_role::regrole
  union all
  select format('function %s: %s', p.oid::regprocedure, a.privilege_type)
  from pg_proc p, aclexplode(p.proacl) a where a.grantee = p_role::regrole
  union all
  select format('database %s: %s', d.datname, a.privilege_type)
  from pg_database d, aclexplode(d.datacl) a where a.grantee = p_role::regrole
  order by 1
$$;

select is(array(select format('%s login=%s super=%s createrole=%s createdb=%s replication=%s bypassrls=%s inherit=%s',
                              rolname, rolcanlogin, rolsuper, rolcreaterole, rolcreatedb, rolreplication,
                              rolbypassrls, rolinherit)
                from pg_roles where rolname in ('pgflow_starter', 'pgflow_worker') order by rolname),
          array['pgflow_starter login=f super=f createrole=f createdb=f replication=f bypassrls=f inherit=t',
                'pgflow_worker login=f super=f createrole=f createdb=f replication=f bypassrls=f inherit=t'],
          'two NOLOGIN roles without any role attribute');
select is_empty($$select 1 from pg_auth_members m
                  where m.member in ('pgflow_worker'::regrole, 'pgflow_starter'::regrole)
                     or m.roleid in ('pgflow_worker'::regrole, 'pgflow_starter'::regrole)$$,
                'they are members of no role, and nothing is a member of them yet');
select is(array(select pg_temp.owned_by('pgflow_worker') union all select pg_temp.owned_by('pgflow_starter')),
          '{}'::text[], 'they own nothing');
select isnt(shobj_description('pgflow_worker'::regrole, 'pg_authid'), null, 'the worker role says what it is for');

-- pgflow_worker
select is(array(select pg_temp.table_privileges('pgflow_worker')), array[
  'pgflow.concurrency_gates: SELECT', 'pgflow.concurrency_keys: SELECT', 'pgflow.deps: SELECT', 'pgflow.flow_aliases: SELECT', 'pgflow.flows: SELECT', 'pgflow.locks: SELECT',
  'pgflow.run_priorities: SELECT', 'pgflow.runs: SELECT', 'pgflow.step_concurrency_limits: SELECT', 'pgflow.step_states: SELECT', 'pgflow.step_tasks: SELECT', 'pgflow.steps: SELECT',
  'pgflow.worker_functions: SELECT', 'pgflow.workers: SELECT',
  'pgmq.meta: SELECT'],
  'the worker''s table privileges: it reads; no INSERT, UPDATE or DELETE on any pgflow table');
select is(array(select pg_temp.other_privileges('pgflow_worker')), array[
  'function pgflow.claim_tasks(text,text,bigint[],uuid,text): EXECUTE',
  'function pgflow.claim_tasks(text,text,bigint[],uuid,text,uuid): EXECUTE',
  'function pgflow.complete_task(uuid,text,integer,jsonb): EXECUTE',
  'function pgflow.complete_tasks(jsonb): EXECUTE',
  'function pgflow.ensure_flow_compiled(text,jsonb,integer,text,jsonb,text,jsonb): EXECUTE',
  'function pgflow.fail_task(uuid,text,integer,text): EXECUTE',
  'function pgflow.fail_tasks(jsonb): EXECUTE',
  'function pgflow.has_visible_work(uuid): EXECUTE',
  'function pgflow.mark_worker_stopped(uuid): EXECUTE',
  'function pgflow.register_worker(uuid,text,text,text,integer): EXECUTE',
  'function pgflow.release_claim(uuid,uuid): EXECUTE',
  'function pgflow.requeue_stalled_tasks(): EXECUTE',
  'function pgflow.start_tasks(text,bigint[],uuid): EXECUTE',
  'function pgflow.wake_waiting_tasks(integer): EXECUTE',
  'function pgflow.worker_heartbeat(uuid): EXECUTE',
  'schema pgflow: USAGE', 'schema pgmq: USAGE'],
  'its schemas (USAGE only) and the SECURITY DEFINER worker API, through which it writes');
select is(array(select format('for role %s in schema %s on %s: %s', pg_get_userbyid(d.defaclrole),
                              d.defaclnamespace::regnamespace, d.defaclobjtype, a.privilege_type)
                from pg_default_acl d, aclexplode(d.defaclacl) a
                where a.grantee = 'pgflow_worker'::regrole order by 1),
          array['for role grants_owner in schema pgmq on r: SELECT', 'for role grants_owner in schema pgmq on r: UPDATE'],
          'and what pgmq.read needs on the queue tables the owner creates from now on');
select is(array(select s from unnest(array['pgflow', 'pgmq', 'public']) s
                where has_schema_privilege('pgflow_worker', s, 'CREATE')), '{}'::text[],
          'it cannot create objects in any schema');

-- pgflow_starter
select is(array(select pg_temp.table_privileges('pgflow_starter')), '{}'::text[], 'the starter has no table privilege');
select is(array(select pg_temp.other_privileges('pgflow_starter')), array[
  'function pgflow.cancel_run(uuid,text): EXECUTE',
  'function pgflow.get_run_with_states(uuid): EXECUTE',
  'function pgflow.resume_run(uuid): EXECUTE',
  'function pgflow.retry_run(uuid,uuid): EXECUTE',
  'function pgflow.send_signal(uuid,text,text,jsonb,integer): EXECUTE',
  'function pgflow.set_run_priority(uuid,integer): EXECUTE',
  'function pgflow.start_flow_with_states(text,jsonb,uuid): EXECUTE',
  'function pgflow.start_flow_with_states_by_slug(text,jsonb,uuid): EXECUTE',
  'function pgflow.start_run(text,jsonb,uuid): EXECUTE',
  'function pgflow.start_run_by_slug(text,jsonb,uuid): EXECUTE',
  'function pgflow.start_run_idempotent(text,jsonb,text): EXECUTE',
  'function pgflow.start_run_idempotent_by_slug(text,jsonb,text): EXECUTE',
  'schema pgflow: USAGE'],
  'only the twelve SECURITY DEFINER entry points');
select is(has_schema_privilege('pgflow_starter', 'pgmq', 'USAGE'), false, 'and no access to PGMQ');

-- PUBLIC and the SECURITY DEFINER functions
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef
                  and has_function_privilege('public', p.oid, 'EXECUTE') order by 1),
          '{}'::text[], 'PUBLIC executes no SECURITY DEFINER function of pgflow');
select is(array(select p.proname::text from pg_proc p
                where p.pronamespace = 'pgflow'::regnamespace and p.prosecdef order by 1),
          array['_admit_gated_tasks', '_create_queue', '_pause_worker_function', 'cancel_run', 'claim_tasks', 'claim_tasks', 'complete_task',
                'complete_tasks', 'ensure_flow_compiled', 'fail_task', 'fail_tasks', 'get_run_with_states', 'has_visible_work',
                'mark_worker_stopped', 'register_worker', 'release_claim', 'requeue_stalled_tasks', 'resume_run', 'retry_run',
                'send_signal', 'set_run_priority', 'setup_requeue_stalled_tasks_cron', 'start_flow_with_states', 'start_flow_with_states_by_slug',
                'start_run', 'start_run_by_slug', 'start_run_idempotent', 'start_run_idempotent_by_slug',
                'start_tasks', 'wake_waiting_tasks', 'worker_heartbeat'],
          '(the migrations'' SECURITY DEFINER set is unchanged)');
select is(has_function_privilege('grants_owner', 'pgflow.setup_requeue_stalled_tasks_cron(text)', 'EXECUTE'), true,
          'the owner keeps all of them');
select is((select proconfig from pg_proc where oid = 'pgflow._create_queue(text)'::regprocedure),
          array['search_path=pg_catalog, pg_temp'], 'queue creation runs as the owner, with a pinned search_path');
select is(array(select r from unnest(array['public', 'pgflow_starter', 'pgflow_worker', 'grants_owner']) r
                where has_function_privilege(r, 'pgflow._create_queue(text)', 'EXECUTE') order by 1),
          array['grants_owner'], 'and only the owner may call it (workers compile through ensure_flow_compiled)');
select is(has_function_privilege('public', 'pgmq.create(text)', 'EXECUTE'), true,
          'pgmq.create is left as PGMQ ships it: every role may call it');
select is(array(select p.oid::regprocedure::text from pg_proc p
                where p.pronamespace = 'pgmq'::regnamespace and p.prosecdef),
          '{}'::text[], 'no PGMQ function runs as its owner');
select is(array(select c from unnest(array['paused_at', 'pause_reason']) c
                where has_column_privilege('pgflow_worker', 'pgflow.worker_functions', c, 'UPDATE')),
          '{}'::text[], 'the worker cannot lift the pause of its function (no UPDATE of its columns)');
select is(has_schema_privilege('public', 'pgflow', 'USAGE'), false, 'schema pgflow still grants nothing to PUBLIC');

select * from finish();
rollback;
