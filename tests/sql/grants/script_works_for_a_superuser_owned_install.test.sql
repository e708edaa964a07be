-- The common self-hosted setup: `pgflow migrate` ran as the superuser, which therefore owns
-- everything and runs the grant script. A worker login still compiles a new flow (its queue
-- then belongs to the superuser) and works it; the application starts and reads the run.
begin;
select plan(8);

\i _worker_statements.sql
\i ../../../sql/contrib/grants.sql
create role grants_worker_login nologin in role pgflow_worker;
create role grants_app_login nologin in role pgflow_starter;
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset

set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_su_install', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          'the worker compiles a new flow');
select is((pgflow.register_worker('b0000000-0000-0000-0000-000000000051', 'grants-su-worker',
                                  'grants_su_install', 'grants_su_install', pgflow.worker_protocol())).protocol, pgflow.worker_protocol(), 'and registers');
reset session authorization;

select is((select pg_get_userbyid(relowner)::text from pg_class where oid = 'pgmq.q_grants_su_install'::regclass),
          current_user::text, 'its queue belongs to the owner (the superuser)');

set session authorization grants_app_login;
select is(pgflow.start_flow_with_states('grants_su_install', '{"a": 1}', 'c0000000-0000-0000-0000-000000000051')->'run'->>'status',
          'started', 'the application starts a run');
reset session authorization;

set session authorization grants_worker_login;
select results_eq($$select outcome, flow_input from pg_temp.read_and_claim('grants_su_install', 'grants_su_install', 'b0000000-0000-0000-0000-000000000051')$$,
                  $$values ('claimed', '{"a": 1}')$$, 'the worker claims its task');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000051', 'only', 0, '"done"')))$$,
                  $$values ('only', 'completed')$$, 'and completes it');
select is(pg_temp.recover_stalled(), 0, 'stall recovery runs');
reset session authorization;

set session authorization grants_app_login;
select is(pgflow.get_run_with_states('c0000000-0000-0000-0000-000000000051')->'run'->'output', '{"only": "done"}'::jsonb,
          'the application reads the finished run');
reset session authorization;

select * from finish();
rollback;
