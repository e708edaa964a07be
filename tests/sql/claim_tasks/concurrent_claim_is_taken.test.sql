-- Outcome "taken": two workers of one queue claim the same message at the same moment. The
-- second claim waits for the first one's row lock, then finds the task no longer queued and
-- reports it as taken, changing nothing. (Setup is committed through dblink so both sessions
-- see it.)
begin;
select plan(6);

select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $q$do $d$ begin
  perform pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
  perform pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
  perform pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn', 'f', 'f', pgflow.worker_protocol());
  perform pgflow.start_flow('f', '{}');
end $d$ $q$);
select dblink_disconnect('setup');
select message_id as msg from pgflow.step_tasks \gset

select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select clock_timestamp() as t0 \gset
select dblink_exec('a', 'begin');
select is((select x from dblink('a', format($$select outcome from pgflow.claim_tasks('f', 'f', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :msg)) as t(x text)),
          'claimed', 'worker 1 claims the task (its transaction stays open)');
select clock_timestamp() as t1 \gset

select dblink_exec('b', 'begin');
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_send_query('b', format($$select outcome, coalesce(reason, '') from pgflow.claim_tasks('f', 'f', array[%s]::bigint[], '22222222-2222-2222-2222-222222222222')$$, :msg));
select ok(pgflow_tests.wait_for_lock(:b_pid), 'worker 2''s claim of the same message waits for worker 1');
select dblink_exec('a', 'commit');

select results_eq($$select * from dblink_get_result('b') as t(outcome text, reason text)$$,
                  $$values ('taken'::text, 'claimed by another worker meanwhile'::text)$$,
                  'worker 2 gets "taken"');
select * from dblink_get_result('b') as t(outcome text, reason text);
select dblink_exec('b', 'commit');

select results_eq($$select status, attempts_count, last_worker_id from pgflow.step_tasks$$,
                  $$values ('started'::text, 1, '11111111-1111-1111-1111-111111111111'::uuid)$$,
                  'the task was started once, by worker 1');
select ok(pgflow_tests.visible_after('a', 'f', 62, :'t0', :'t1'),
          'its message keeps worker 1''s visibility (timeout 60 + 2 s from worker 1''s claim)');
select is((select count(*) from pgmq.a_f), 0::bigint, 'nothing was archived');

select dblink_disconnect('a');
select dblink_disconnect('b');
select * from finish();
rollback;
