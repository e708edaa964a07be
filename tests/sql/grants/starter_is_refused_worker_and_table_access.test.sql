-- pgflow_starter can start runs and read them, nothing else: no tables, no queues, no worker
-- API, no other SECURITY DEFINER function, no other role, no other schema's data.
begin;
select plan(21);

\i _install_as_owner.sql
\i _worker_statements.sql
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_app_login nologin in role pgflow_starter;
create schema grants_app_data;
create table grants_app_data.secrets (s text);
insert into grants_app_data.secrets values ('s3cret');

-- A flow with a run and a claimed task, as the worker role would leave them.
select pgflow.ensure_flow_compiled('grants_refuse', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('only'))), pgflow.worker_protocol()) is not null as compiled;
select pgflow.register_worker('b0000000-0000-0000-0000-000000000031', 'grants-refuse-worker',
                              'grants_refuse', 'grants_refuse', pgflow.worker_protocol()) is not null as registered;
select pgflow.start_flow_with_states('grants_refuse', '{}', 'c0000000-0000-0000-0000-000000000031') is not null as started;
select count(*) from pg_temp.read_and_claim('grants_refuse', 'grants_refuse', 'b0000000-0000-0000-0000-000000000031');

set session authorization grants_app_login;
-- the worker API
select throws_ok($$select * from pg_temp.read_and_claim('grants_refuse', 'grants_refuse', 'b0000000-0000-0000-0000-000000000031')$$,
                 '42501', 'permission denied for schema pgmq', 'cannot read and claim tasks');
select throws_ok($$select * from pgflow.claim_tasks('grants_refuse', 'grants_refuse', '{1}', 'b0000000-0000-0000-0000-000000000031')$$,
                 '42501', 'permission denied for function claim_tasks', 'cannot claim tasks');
select throws_ok($$select * from pgflow.complete_task('c0000000-0000-0000-0000-000000000031', 'only', 0, '1')$$,
                 '42501', 'permission denied for function complete_task', 'cannot complete a task');
select throws_ok($$select * from pgflow.fail_task('c0000000-0000-0000-0000-000000000031', 'only', 0, 'x')$$,
                 '42501', 'permission denied for function fail_task', 'cannot fail a task');
select throws_ok($$select pgflow.requeue_stalled_tasks()$$,
                 '42501', 'permission denied for function requeue_stalled_tasks', 'cannot run stall recovery');
select throws_ok($$select pgflow.register_worker('b0000000-0000-0000-0000-000000000032', 'x', 'grants_refuse', 'grants_refuse', pgflow.worker_protocol())$$,
                 '42501', 'permission denied for function register_worker', 'cannot register a worker');
select throws_ok($$select pgflow.worker_heartbeat('b0000000-0000-0000-0000-000000000031')$$,
                 '42501', 'permission denied for function worker_heartbeat', 'cannot touch a worker');
select throws_ok($$select pgflow.has_visible_work('b0000000-0000-0000-0000-000000000031')$$,
                 '42501', 'permission denied for function has_visible_work', 'cannot look at a worker''s queue');
select throws_ok($$select pgflow.ensure_flow_compiled('grants_other', '{"steps": []}', pgflow.worker_protocol())$$,
                 '42501', 'permission denied for function ensure_flow_compiled', 'cannot compile flows');
select throws_ok($$select pgflow.setup_requeue_stalled_tasks_cron()$$,
                 '42501', 'permission denied for function setup_requeue_stalled_tasks_cron',
                 'cannot call the owner''s other SECURITY DEFINER function');
-- tables and queues
select throws_ok($$select input from pgflow.runs$$, '42501', 'permission denied for table runs',
                 'cannot read run inputs directly');
select throws_ok($$select * from pgflow.start_flow('grants_refuse', '{}')$$, '42501', 'permission denied for table flow_aliases',
                 'the invoker start_flow is not granted (start_flow_with_states is)');
select throws_ok($$delete from pgflow.runs$$, '42501', 'permission denied for table runs', 'cannot delete runs');
select throws_ok($$select * from pgmq.read('grants_refuse', 30, 1)$$, '42501', 'permission denied for schema pgmq',
                 'cannot read the queue');
select throws_ok($$select pgmq.send('grants_refuse', '{}')$$, '42501', 'permission denied for schema pgmq',
                 'cannot send to the queue');
select throws_ok($$create table pgflow.mine (x int)$$, '42501', 'permission denied for schema pgflow',
                 'cannot create objects in schema pgflow');
-- everything else
select throws_ok($$select * from grants_app_data.secrets$$, '42501', 'permission denied for schema grants_app_data',
                 'cannot read another schema''s data');
select throws_ok($$set role pgflow_worker$$, '42501', 'permission denied to set role "pgflow_worker"',
                 'cannot become the worker');
select throws_ok($$set role grants_owner$$, '42501', 'permission denied to set role "grants_owner"',
                 'cannot become the owner');
reset session authorization;

select is((select status from pgflow.step_tasks where run_id = 'c0000000-0000-0000-0000-000000000031'), 'started',
          'the task is untouched');
select is(array(select pg_temp.owned_by('pgflow_starter') union all select pg_temp.owned_by('grants_app_login')),
          '{}'::text[], 'the starter owns nothing');

select * from finish();
rollback;
