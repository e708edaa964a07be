-- When schema realtime belongs to someone the script's role cannot grant for (as on a managed
-- server), the script still applies everything else and leaves realtime to that owner (with a
-- warning naming the statements that give schema pgflow's owner what broadcasts need),
-- instead of failing or granting half of it.
begin;
select plan(5);

\i _install_as_owner.sql
select pgflow_tests.install_realtime_stub();  -- owned by the superuser
set role grants_owner;
set local client_min_messages = error;  -- (the expected warning)
\i ../../../sql/contrib/grants.sql
reset client_min_messages;
reset role;

select is((select count(*) from pg_roles where rolname in ('pgflow_worker', 'pgflow_starter')), 2::bigint,
          'the script completed');
select is(has_function_privilege('pgflow_worker', 'pgflow.requeue_stalled_tasks()', 'EXECUTE'), true,
          'with its other grants');
select is(has_schema_privilege('grants_owner', 'realtime', 'USAGE'), false, 'but none on schema realtime');
select is(has_table_privilege('grants_owner', 'realtime.messages', 'INSERT'), false, 'nor on realtime.messages');
select is(has_schema_privilege('pgflow_worker', 'realtime', 'USAGE'), false, '(and none for the worker)');

select * from finish();
rollback;
