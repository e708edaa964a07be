-- A timeout racing a signal: whichever takes the run first wins, and the other changes nothing.
-- A timer that fires first fails the wait; the signal blocked behind it is refused. A signal
-- that arrives first completes it; the timers skip the run while the signal's transaction
-- holds it, and find nothing to do once it has committed. max_runs bounds one call.
select dblink_connect('setup', pgflow_tests.dblink_connstr());
select dblink_exec('setup', $setup$ do $do$ begin
  perform pgflow_tests.setup_wait_flow('approval', '{"kind": "signal", "timeout": 60}');
  perform pgflow.start_run_by_slug('approval', '{}', ('b0000000-0000-0000-0000-00000000000' || n)::uuid)
  from generate_series(1, 4) n;
  perform pgflow_tests.complete_step_task(('b0000000-0000-0000-0000-00000000000' || n)::uuid, 'draft', 0, '"d"')
  from generate_series(1, 4) n;
  update pgflow.step_tasks set wake_at = now() - interval '1 s' where step_slug = 'approve';
end $do$ $setup$);

begin;
select plan(8);

create temp table race_result as
select * from pgflow_tests.race(
  $$select pgflow.wake_waiting_tasks(1)::text$$,
  $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000001', 'approve', 'late', '"yes"')$$);
select is((select a_result from race_result), '1', 'the timer fires first (one run per call: max_runs 1)');
select ok((select b_error from race_result)
          like '%Run "b0000000-0000-0000-0000-000000000001" is failed: the signal for step "approve" of run "b0000000-0000-0000-0000-000000000001" is refused%',
          'the signal blocked behind it is refused: the run failed');

-- Run 2: a signal holds the run (its transaction open) while the timers run.
select dblink_exec('setup', 'begin');
select * from dblink('setup', $$select pgflow.send_signal('b0000000-0000-0000-0000-000000000002', 'approve', 'first', '"yes"')$$)
  as t(result text);
select is(pgflow.wake_waiting_tasks(1), 0, 'the timers skip a run another transaction holds, without waiting');
select dblink_exec('setup', 'commit');
select dblink_disconnect('setup');
select is((select output from pgflow.step_states where run_id = 'b0000000-0000-0000-0000-000000000002' and step_slug = 'approve'),
          '"yes"'::jsonb, 'the signal completed the wait');
select is(pgflow.wake_waiting_tasks(), 2, 'the next call ends the waits still due (runs 3 and 4), not run 2''s');
select is((select array_agg(status order by run_id) from pgflow.runs), array['failed', 'started', 'failed', 'failed'],
          'runs 1, 3 and 4 timed out; run 2 goes on');
select is(pgflow_tests.task_statuses('b0000000-0000-0000-0000-000000000002'),
          array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'], 'run 2''s next step is queued');
select is(pgflow.wake_waiting_tasks(), 0, 'nothing is left to wake');

select * from finish();
rollback;
