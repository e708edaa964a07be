-- pgflow_worker works runs, nothing more: no DDL in schema pgflow or pgmq, no ownership (so no
-- triggers on the queues the owner writes into), no deletes, no run starts, no changes to a
-- run's input, a flow's options or a worker's deprecation, no destructive recompilation, no
-- other SECURITY DEFINER function, no application queue, no other schema's data, no other role.
begin;
select plan(33);

\i _install_as_owner.sql
-- An application queue the owner created before the script ran, holding a message.
set role grants_owner;
select pgmq.create('grants_app_jobs');
select pgmq.send('grants_app_jobs', '{"job": 1}') is not null as sent;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
create schema grants_app_data;
create table grants_app_data.secrets (s text);

select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape,
       jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('other')))::text as changed \gset
set session authorization grants_worker_login;
select is(pgflow.ensure_flow_compiled('grants_ddl', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'compiled',
          '(the worker compiled its flow)');
reset session authorization;

set session authorization grants_worker_login;
-- DDL and ownership
select throws_ok($$drop table pgflow.runs$$, '42501', 'must be owner of table runs', 'cannot drop pgflow tables');
select throws_ok($$alter table pgflow.step_tasks add column x int$$, '42501', 'must be owner of table step_tasks',
                 'cannot alter pgflow tables');
select throws_ok($$truncate pgflow.step_tasks$$, '42501', 'permission denied for table step_tasks',
                 'cannot truncate pgflow tables');
select throws_ok($$create table pgflow.mine (x int)$$, '42501', 'permission denied for schema pgflow',
                 'cannot create tables in schema pgflow');
select throws_ok($$create function pgflow.mine() returns int language sql as 'select 1'$$, '42501',
                 'permission denied for schema pgflow', 'cannot create functions in schema pgflow');
select throws_ok($$create table pgmq.mine (x int)$$, '42501', 'permission denied for schema pgmq',
                 'cannot create tables in schema pgmq');
select throws_ok($$create function pgmq.mine() returns trigger language plpgsql as 'begin return new; end'$$, '42501',
                 'permission denied for schema pgmq', 'cannot create functions in schema pgmq');
select throws_ok($$create trigger mine before insert on pgmq.q_grants_ddl for each row execute function pgflow._workers_require_protocol()$$,
                 '42501', 'permission denied for table q_grants_ddl',
                 'cannot attach triggers to its queue (which the owner''s functions write into)');
select throws_ok($$alter table pgmq.q_grants_ddl alter column vt set default now()$$, '42501',
                 'must be owner of table q_grants_ddl', 'cannot alter its queue');
-- (The extension's drop_queue first takes the tables out of the extension.)
select throws_ok($$select pgmq.drop_queue('grants_ddl')$$, '42501',
                 case when exists (select 1 from pg_extension where extname = 'pgmq')
                      then 'must be owner of extension pgmq' else 'must be owner of table q_grants_ddl' end,
                 'cannot drop its queue');
select throws_ok($$select pgmq.purge_queue('grants_ddl')$$, '42501', 'permission denied for table q_grants_ddl',
                 'cannot purge its queue');
select throws_ok($$delete from pgmq.meta$$, '42501', 'permission denied for table meta', 'cannot delete queue metadata');
-- data it must not change
select throws_ok($$delete from pgflow.runs$$, '42501', 'permission denied for table runs', 'cannot delete runs');
select throws_ok($$select pgflow.delete_flow_and_data('grants_ddl')$$, '42501', 'permission denied for table locks', 'cannot delete a flow');
select is(pgflow.is_local(), true, '(this is a local development database)');
select throws_ok($$select pgflow.ensure_flow_compiled('grants_ddl', '$$ || :'changed' || $$', pgflow.worker_protocol())$$, '42501',
                 'Flow "grants_ddl" differs from the deployed definition; recompiling it on this local database deletes its runs, which role "grants_worker_login" may not delete (develop as the owner of schema pgflow)',
                 'so a changed flow would be recompiled destructively: refused (develop as the owner)');
select throws_ok($$select * from pgflow.start_flow('grants_ddl', '{}')$$, '42501', 'permission denied for table runs',
                 'cannot start runs');
select throws_ok($$update pgflow.runs set input = '{}'$$, '42501', 'permission denied for table runs',
                 'cannot change a run''s input');
select throws_ok($$update pgflow.flows set opt_max_attempts = 99$$, '42501', 'permission denied for table flows',
                 'cannot change a flow''s options');
select throws_ok($$update pgflow.steps set opt_timeout = 1$$, '42501', 'permission denied for table steps',
                 'cannot change a step''s options');
select throws_ok($$update pgflow.workers set deprecated_at = null$$, '42501', 'permission denied for table workers',
                 'cannot undo an operator''s deprecation');
select throws_ok($$update pgflow.step_tasks set queue_name = 'grants_app_jobs'$$, '42501',
                 'permission denied for table step_tasks', 'cannot re-address a task');
-- functions that are not its own
select throws_ok($$select pgflow.start_flow_with_states('grants_ddl', '{}')$$, '42501',
                 'permission denied for function start_flow_with_states', 'cannot use the starter''s entry points');
select throws_ok($$select pgflow.get_run_with_states(gen_random_uuid())$$, '42501',
                 'permission denied for function get_run_with_states', 'nor read runs through them');
select throws_ok($$select pgflow.setup_requeue_stalled_tasks_cron()$$, '42501',
                 'permission denied for function setup_requeue_stalled_tasks_cron', 'cannot schedule cron jobs as the owner');
-- anything else
select throws_ok($$select * from pgmq.read('grants_app_jobs', 30, 1)$$, '42501',
                 'permission denied for table q_grants_app_jobs', 'cannot read an application queue');
select throws_ok($$select pgmq.send('grants_app_jobs', '{}')$$, '42501',
                 'permission denied for table q_grants_app_jobs', 'cannot send to an application queue');
select throws_ok($$select * from grants_app_data.secrets$$, '42501', 'permission denied for schema grants_app_data',
                 'cannot read another schema''s data');
select throws_ok($$set role grants_owner$$, '42501', 'permission denied to set role "grants_owner"',
                 'cannot become the owner');
select throws_ok($$set role pgflow_starter$$, '42501', 'permission denied to set role "pgflow_starter"',
                 'cannot become the starter');
select throws_ok($$create role grants_mine$$, '42501', 'permission denied to create role', 'cannot create roles');
reset session authorization;

select is((select (active, archived) from pgflow_tests.queue_counts('grants_app_jobs'))::text, '(1,0)',
          'the application queue is untouched');

select * from finish();
rollback;
