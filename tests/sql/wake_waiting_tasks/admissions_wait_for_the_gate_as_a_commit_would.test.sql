-- Since 0028 the timers make the admissions of their batch themselves, before their commit. As
-- the commit would, they wait for a gate another transaction holds (skipping it instead would
-- leave a step's task held with a slot free until the flow's next admission or stall
-- recovery's sweep: the other transaction counted before this one's task existed).
-- (Commits for real: this file runs in its own database.)
select pgflow.ensure_flow_compiled('lim', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('nap', wait => '{"kind": "sleep", "seconds": 3600}'),
         pgflow_tests.step_shape('work', array['nap']))),
       pgflow.worker_protocol(), 'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 1}}}')->>'status';
select pgflow.start_flow('lim', '{}') is not null as started;
update pgflow.step_tasks set wake_at = now() - interval '1 s' where step_slug = 'nap';

select plan(5);
select dblink_connect('a', pgflow_tests.dblink_connstr());
select dblink_connect('b', pgflow_tests.dblink_connstr());
select pid as b_pid from dblink('b', 'select pg_backend_pid()') as t(pid int) \gset
select dblink_exec('a', 'begin');
select dblink_exec('a', $$update pgflow.concurrency_gates set turn = turn + 1 where flow_slug = 'lim'$$);
select dblink_send_query('b', 'select pgflow.wake_waiting_tasks()::text');
select ok(pgflow_tests.wait_for_lock(:b_pid), 'the timers'' admission waits for the gate another transaction holds');
select dblink_exec('a', 'commit');
select is((select x from dblink_get_result('b', false) as t(x text)), '1', 'then the call ends the sleep');
select is(dblink_error_message('b'), 'OK', 'without an error');
select * from dblink_get_result('b', false) as t(x text);
select is((select gate || ' ' || status || ' ' || (message_id is not null) from pgflow.step_tasks where step_slug = 'work'),
          'admitted queued true', 'and admits the next step''s task into the free slot, its message sent');
select is((select count(*) from pgmq.q_lim where vt <= clock_timestamp()), 1::bigint, 'which is visible');
select dblink_disconnect('a');
select dblink_disconnect('b');
select * from finish();
