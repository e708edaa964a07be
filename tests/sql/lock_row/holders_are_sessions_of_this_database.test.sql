-- A timed-out wait names the sessions of this database only. Databases cloned from one template
-- share table OIDs, so a session of another database holding a lock on "its" pgflow.locks looks,
-- in pg_locks, like a holder of ours; before the fix the error named such a session too (a
-- parallel test's, in CI). A twin database of this file's own template holds that lock here.
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset
select pgflow.ensure_flow_compiled('held', :'shape'::jsonb, pgflow.worker_protocol()) is not null as compiled;
select current_database() || '_twin' as twin \gset
select dblink_connect('admin', pgflow_tests.dblink_connstr());
select dblink_exec('admin', format('create database %I template %I', :'twin',
                                   current_setting('pgflow_tests.template')));

begin;
select plan(3);
select dblink_connect('twin', format('host=127.0.0.1 port=%s user=postgres dbname=%s application_name=pgtap-twin',
                                     current_setting('port'), :'twin'));
select pid as twin_pid from dblink('twin', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('twin', 'begin');
select dblink_exec('twin', 'lock table pgflow.locks in row exclusive mode');
select is((select count(*)::int from pg_locks l
           where l.pid = :twin_pid and l.relation = 'pgflow.locks'::regclass), 1,
          'the twin session holds a lock on a table of the same OID as our pgflow.locks');

select dblink_connect('holder', pgflow_tests.dblink_connstr() || ' application_name=pgtap-holder');
select pid as holder from dblink('holder', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('holder', 'begin');
select * from dblink('holder', $$select pgflow._lock_flow_definition('held')::text$$) as t(x text);

set local lock_timeout = '200ms';
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('held', %L, 5)$$, :'shape'), '55P03',
  format('pgflow: gave up waiting for the definition lock of flow "held" after %% s; held by pid %s (role postgres, application "pgtap-holder", idle in transaction, transaction open for %%)', :holder),
  'the error names the holder in this database ...');
select is(pgflow._lock_holders(null, 'pgflow.locks', clock_timestamp()) like '%pid ' || :twin_pid || ' (%', false,
          '... and never the twin''s session');

select dblink_exec('holder', 'rollback');
select dblink_disconnect('holder');
select dblink_exec('twin', 'rollback');
select dblink_disconnect('twin');
select * from finish();
rollback;

select dblink_exec('admin', format('drop database %I with (force)', :'twin'));
select dblink_disconnect('admin');
