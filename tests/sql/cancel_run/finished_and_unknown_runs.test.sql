-- Cancelling a run that already finished changes nothing and returns false (with a NOTICE); a
-- cancellation without a reason says just "cancelled"; an unknown run is P0002.
begin;
select plan(6);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'only');
select run_id as done from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'done', 'only', 0, '1') \g /dev/null
select run_id as failed from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'failed', 'only') \g /dev/null
select run_id as plain from pgflow.start_flow('f', '{}') \gset

create temp table before as select * from pgflow.runs;
select is(pgflow.cancel_run(:'done', 'too late'), false, 'a completed run is not cancelled');
select is(pgflow.cancel_run(:'failed'), false, 'nor a failed one');
select is((select count(*)::int from (select * from pgflow.runs where run_id <> :'plain' except select * from before) x), 0,
          'neither changed');
select is(pgflow.cancel_run(:'plain'), true, 'a cancellation without a reason');
select results_eq($$select cancel_reason, (select payload->>'error_message' from pgflow_tests.realtime_events(run_id)
                                             where event = 'run:failed') from pgflow.runs where run_id = '$$ || :'plain' || $$'$$,
                  $$values (null::text, 'cancelled')$$, 'has no reason and says "cancelled"');
select throws_ok($$select pgflow.cancel_run('00000000-0000-0000-0000-0000000000ff')$$, 'P0002',
                 'Run "00000000-0000-0000-0000-0000000000ff" does not exist', 'an unknown run is an error');

select * from finish();
rollback;
