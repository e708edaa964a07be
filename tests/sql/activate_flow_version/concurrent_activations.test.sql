-- Two operators activate different versions expecting the same current one at the same time:
-- the second waits for the alias lock, then fails naming the version the first activated. No
-- lost update.
begin;
select plan(3);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
select pgflow_tests.deploy('greetUserV3', 'greetUser');
-- (committed for the other sessions: this database is the test's own)
commit;
begin;

select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select dblink_exec('a', 'begin');
select * from dblink('a', $$select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1')::text$$) as t(x text);
select dblink_exec('b', 'begin');
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('b', $$select pgflow.activate_flow_version('greetUser', 'greetUserV3', 'greetUserV1')::text$$);
select ok(pgflow_tests.wait_for_lock(:b_pid), 'the second activation waits for the first');
select dblink_exec('a', 'commit');
select * from dblink_get_result('b', false) as t(x text);
select ok(dblink_error_message('b') like '%Alias "greetUser" points to "greetUserV2", but "greetUserV1" was expected; nothing changed%',
          'then fails, naming the version the first one activated');
select * from dblink_get_result('b', false) as t(x text);
select dblink_exec('b', 'rollback');
select is(pgflow_tests.active_version('greetUser'), 'greetUserV2', 'the first activation stands');
select dblink_disconnect('a');
select dblink_disconnect('b');

select * from finish();
rollback;
