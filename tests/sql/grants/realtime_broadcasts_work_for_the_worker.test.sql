-- On Supabase (a schema `realtime` with realtime.send), every state change the worker causes is
-- also broadcast through realtime.send. Since schema 0012 every state change runs in a SECURITY
-- DEFINER function, so the broadcast runs with the rights of schema pgflow's owner, never the
-- worker's: the script (run by a superuser, as on a server where someone else owns realtime)
-- grants the owner what that needs and the worker nothing there. Without those rights of the
-- owner every completion would fail.
begin;
select plan(7);

\i _install_as_owner.sql
\i _worker_statements.sql
select pgflow_tests.install_realtime_stub();  -- owned by the superuser
\i ../../../sql/contrib/grants.sql
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
select is(has_schema_privilege('grants_owner', 'realtime', 'USAGE')
          and has_function_privilege('grants_owner', 'realtime.send(jsonb, text, text, boolean)', 'EXECUTE')
          and has_table_privilege('grants_owner', 'realtime.messages', 'INSERT'), true,
          'the script granted the owner USAGE on realtime, EXECUTE on send and INSERT on messages');
select is(has_schema_privilege('pgflow_worker', 'realtime', 'USAGE')
          or has_table_privilege('grants_owner', 'realtime.messages', 'SELECT'), false,
          'the worker nothing there, the owner nothing more');

-- Whose rights matter: the owner's, not the worker's.
revoke usage on schema realtime from grants_owner;
set session authorization grants_worker_login;
select throws_ok($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000062', 'only', 0, '1')))$$,
                 '42501', 'permission denied for schema realtime',
                 'without the owner''s USAGE on schema realtime no worker completes anything');
reset session authorization;
grant usage on schema realtime to pgflow_worker;
set session authorization grants_worker_login;
select throws_ok($$select * from pg_temp.complete_batch(jsonb_build_array(pg_temp.result('c0000000-0000-0000-0000-000000000062', 'only', 0, '1')))$$,
                 '42501', 'permission denied for schema realtime',
                 'and the worker''s own USAGE does not help');
reset session authorization;

select * from finish();
rollback;
