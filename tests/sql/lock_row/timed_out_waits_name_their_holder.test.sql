-- The lock waits of startup and operator paths are bounded: by the caller's lock_timeout, or
-- 30 s when it has none; a wait that times out fails with SQLSTATE 55P03 and a message naming
-- what it waited for and the session holding it (pid, role, application, state, transaction
-- age), instead of waiting forever or PostgreSQL's bare "canceling statement due to lock
-- timeout". The caller's lock_timeout is left as it was.
select jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('only')))::text as shape \gset
-- Committed, so that the holder's session sees them (this file runs in its own database).
select pgflow.ensure_flow_compiled('held', :'shape'::jsonb, pgflow.worker_protocol()) is not null as compiled;
select pgflow.register_worker('a0000000-0000-0000-0000-000000000001', 'held-worker', 'held', 'held',
                              pgflow.worker_protocol()) is not null as registered;
select pgflow.start_run_by_slug('held', '{}', 'c0000000-0000-0000-0000-000000000001') is not null as started;

begin;
select plan(10);
select dblink_connect('holder', pgflow_tests.dblink_connstr() || ' application_name=pgtap-holder');
select pid as holder from dblink('holder', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('holder', 'begin');
select * from dblink('holder', $$select pgflow._lock_flow_definition('held')::text$$) as t(x text);
select * from dblink('holder', $$select 1 from pgflow.runs where run_id = 'c0000000-0000-0000-0000-000000000001' for update$$) as t(x int);
select * from dblink('holder', $$select 1 from pgflow.worker_functions where function_name = 'held-worker' for update$$) as t(x int);

set local lock_timeout = '200ms';
select pgflow_tests.throws_like(format($$select pgflow.ensure_flow_compiled('held', %L, 5)$$, :'shape'), '55P03',
  format('pgflow: gave up waiting for the definition lock of flow "held" after %% s; held by pid %s (role postgres, application "pgtap-holder", idle in transaction, transaction open for %%)', :holder),
  'worker startup gives up on a held definition lock, naming the session that holds it');
select pgflow_tests.throws_like($$select pgflow.activate_flow_version('held', 'held', 'held')$$, '55P03',
  format('pgflow: gave up waiting for the definition lock of flow "held" after %% s; held by pid %s (%%', :holder),
  'so does activation');
select pgflow_tests.throws_like($$select pgflow.delete_flow_and_data('held')$$, '55P03',
  format('pgflow: gave up waiting for the definition lock of flow "held" after %% s; held by pid %s (%%', :holder),
  'and deletion');
select pgflow_tests.throws_like($$select pgflow.cancel_run('c0000000-0000-0000-0000-000000000001')$$, '55P03',
  format('pgflow: gave up waiting for run "c0000000-0000-0000-0000-000000000001" after %% s; held by pid %s (%%', :holder),
  'run control gives up on a held run, naming its holder');
select pgflow_tests.throws_like($$select pgflow.register_worker('a0000000-0000-0000-0000-000000000002', 'held-worker', 'held', 'held', 5)$$, '55P03',
  format('pgflow: gave up waiting for the row of worker function "held-worker" after %% s; held by pid %s (%%', :holder),
  'registration gives up on a held worker function, naming its holder');
select is(current_setting('lock_timeout'), '200ms', 'the caller''s lock_timeout is untouched');

select dblink_exec('holder', 'rollback');
select is(pgflow.ensure_flow_compiled('held', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'verified',
          'once the holder lets go, startup goes through');
set local lock_timeout = 0;
select is(pgflow.ensure_flow_compiled('held', :'shape'::jsonb, pgflow.worker_protocol())->>'status', 'verified',
          'a caller without lock_timeout gets a bounded wait ...');
select is(current_setting('lock_timeout'), '0', '... and its setting back afterwards');
select is(pgflow._bound_lock_waits() || ' then ' || current_setting('lock_timeout'), '0 then 30s',
          'the bound is 30 s when the caller set none');

select dblink_disconnect('holder');
select * from finish();
rollback;
