-- activate_flow_version takes the alias lock (advisory xact lock (2, hashtext(lower(alias))))
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

select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(2, hashtext('greetuser'))$$) as t(ok boolean)),
          false, 'another session cannot take the alias lock');
select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(2, hashtext('welcome'))$$) as t(ok boolean)),
          true, 'the lock of another alias is free');
select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(1, hashtext('greetuserv2'))$$) as t(ok boolean)),
          false, 'nor the definition lock of the activated version');
select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(1, hashtext('greetuserv1'))$$) as t(ok boolean)),
          true, 'the one of the version it replaced is free');

select dblink_disconnect('other');
select * from finish();
rollback;
