-- activate_flow_version takes the alias lock (the row 'alias:<lower(alias)>' of pgflow.locks)
-- and then the definition lock of the version it activates, and keeps them until the
-- transaction ends, so deployments of that alias, other activations and hand-built changes of
-- that version wait; other aliases and versions do not.
begin;
select plan(4);

select pgflow_tests.deploy('greetUserV1', 'greetUser');
select pgflow_tests.deploy('greetUserV2', 'greetUser');
commit;  -- (the deployments' locks end here; this database is the test's own)
begin;
select pgflow.activate_flow_version('greetUser', 'greetUserV2', 'greetUserV1');
select dblink_connect('other', pgflow_tests.dblink_connstr());

select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_alias('greetUser')$$),
          true, 'another session cannot take the alias lock');
select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_alias('welcome')$$),
          false, 'the lock of another alias is free');
select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_definition('greetUserV2')$$),
          true, 'nor the definition lock of the activated version');
select is(pgflow_tests.lock_is_held('other', $$pgflow._lock_flow_definition('greetUserV1')$$),
          false, 'the one of the version it replaced is free');

select dblink_disconnect('other');
select * from finish();
rollback;
