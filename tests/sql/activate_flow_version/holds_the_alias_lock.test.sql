-- activate_flow_version takes the alias lock (advisory xact lock (2, hashtext(lower(alias))))
-- and keeps it until the transaction ends, so deployments of that alias and other activations
-- wait; other aliases do not.
begin;
select plan(3);

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
select is((select * from dblink('other', $$select pg_try_advisory_xact_lock(1, hashtext('greetuserv1'))$$) as t(ok boolean)),
          true, 'activation takes no definition lock');

select dblink_disconnect('other');
select * from finish();
rollback;
