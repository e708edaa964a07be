-- On Supabase (a schema `realtime` with realtime.send), every state change the worker causes is
-- also broadcast through realtime.send, with the worker's rights. The script grants what that
-- needs; without USAGE on schema realtime every completion would fail.
begin;
select plan(6);

\i _install_as_owner.sql
\i _worker_statements.sql
select pgflow_tests.install_realtime_stub();
alter schema realtime owner to grants_owner;
alter table realtime.messages owner to grants_owner;
alter function realtime.send(jsonb, text, text, boolean) owner to grants_owner;
set role grants_owner;
\i ../../../sql/contrib/grants.sql
reset role;
create role grants_worker_login nologin in role pgflow_worker;
create role grants_app_login nologin in role pgflow_starter;
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset

set session authorization grants_worker_login;
select pgflow.ensure_flow_compiled('grants_rt', :'shape'::jsonb, pgflow.worker_protocol())->>'status' as compiled;
select pgflow.register_worker('b0000000-0000-0000-0000-000000000061', 'grants-rt-worker', 'grants_rt', 'grants_rt', pgflow.worker_protocol()) is not null as registered;
reset session authorization;
set session authorization grants_app_login;
select pgflow.start_flow_with_states('grants_rt', '{}', 'c0000000-0000-0000-0000-000000000061') is not null as started;
select pgflow.start_flow_with_states('grants_rt', '{}', 'c0000000-0000-0000-0000-000000000062') is not null as started;
reset session authorization;

set session authorization grants_worker_login;
select is((select count(*) from pg_temp.read_and_claim('grants_rt', 'grants_rt', 'b0000000-0000-0000-0000-000000000061')),
          2::bigint, 'the worker claims both tasks');
select results_eq($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000061', 'only', 0, '1')))$$,
                  $$values ('only', 'completed')$$, 'and completes one');
reset session authorization;

select results_eq($$select event from pgflow_tests.realtime_events('c0000000-0000-0000-0000-000000000061')$$,
                  $$values ('run:started'), ('step:only:started'), ('step:only:completed'), ('run:completed')$$,
                  'the worker''s state changes were broadcast too');
select is(has_schema_privilege('pgflow_worker', 'realtime', 'USAGE')
          and has_function_privilege('pgflow_worker', 'realtime.send(jsonb, text, text, boolean)', 'EXECUTE')
          and has_table_privilege('pgflow_worker', 'realtime.messages', 'INSERT'), true,
          'the script granted USAGE on realtime, EXECUTE on send and INSERT on messages');
select is(has_table_privilege('pgflow_worker', 'realtime.messages', 'SELECT'), false, 'and nothing more there');

-- Why the schema grant matters: the core looks realtime.send up on every state change.
revoke usage on schema realtime from pgflow_worker;
set session authorization grants_worker_login;
select throws_ok($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000062', 'only', 0, '1')))$$,
                 '42501', 'permission denied for schema realtime',
                 'without USAGE on schema realtime a worker cannot complete anything');
reset session authorization;

select * from finish();
rollback;
