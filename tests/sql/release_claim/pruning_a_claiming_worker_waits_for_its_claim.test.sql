-- Pruning a worker (sql/contrib/prune_data_older_than.sql) deletes its claim fence (0030) before
-- its row, the order a claim takes them in (the fence, then the worker row its tasks' foreign
-- key locks). A prune that met a claim of that worker half-way therefore waits for it; deleting
-- the row first (the fence then by its cascade) deadlocked with it (40P01). (Committed through
-- dblink so every session sees it; the file runs in its own database.)
\i ../../../sql/contrib/prune_data_older_than.sql
begin;
select plan(4);

select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $q$do $d$ begin
  perform pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
  perform pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
  perform pgflow.start_flow('f', '{}');
  update pgflow.workers set last_heartbeat_at = now() - interval '1 day';  -- a stuck heartbeat
end $d$ $q$);
select run_id as run from pgflow.runs \gset

select dblink_connect('holder', pgflow_tests.dblink_connstr());
select dblink_connect('claim', pgflow_tests.dblink_connstr());
select dblink_connect('prune', pgflow_tests.dblink_connstr());
select pid as claim_pid from dblink('claim', 'select pg_backend_pid()') as t(pid int) \gset
select pid as prune_pid from dblink('prune', 'select pg_backend_pid()') as t(pid int) \gset

-- The claim passes its fence, then waits for the run another session holds.
select dblink_exec('holder', 'begin');
select * from dblink('holder', format($$select 1 from pgflow.runs where run_id = %L for update$$, :'run')) as t(x int);
select dblink_send_query('claim', $$select outcome from pgflow.claim_tasks('f', 'f',
  array(select m.msg_id from pgmq.read('f', 30, 10) m), '11111111-1111-1111-1111-111111111111', null,
  'aaaaaaaa-0000-0000-0000-000000000001')$$);
select ok(pgflow_tests.wait_for_lock(:claim_pid), 'the claim holds its fence and waits for the run');
select dblink_send_query('prune', $$select pgflow.prune_data_older_than('1 hour')$$);
select ok(pgflow_tests.wait_for_lock(:prune_pid), 'the prune of its worker waits for the claim');
select dblink_exec('holder', 'commit');

select is((select x from dblink_get_result('claim') as t(x text)), 'claimed', 'the claim ends, with no deadlock');
select * from dblink_get_result('claim') as t(x text);
select * from dblink_get_result('prune') as t(x text);
select is((select count(*) from pgflow.workers) || ' ' || (select count(*) from pgflow.claim_fences)
          || ' ' || (select count(*) from pgflow.step_tasks where last_worker_id is null), '0 0 1',
          'then the prune deletes the worker and its fence (its task keeps running, without a worker)');
select * from dblink_get_result('prune') as t(x text);

select dblink_disconnect('holder');
select dblink_disconnect('claim');
select dblink_disconnect('prune');
select dblink_disconnect('setup');
select * from finish();
rollback;
