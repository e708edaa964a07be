-- fail_task for a cancelled task of a failed run changes nothing: no retry (status, attempts,
-- error and message untouched), no second run:failed.
begin;
select plan(4);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 3);
select pgflow.add_step('f', 'slow');
select pgflow.add_step('f', 'breaks', max_attempts => 1);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'slow') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'breaks', 0, 'first failure') \g /dev/null

select results_eq($$select status, attempts_count, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'slow', 0, 'late failure')$$,
                  $$values ('cancelled', 1, null::text)$$, 'returns the cancelled row unchanged');
select results_eq($$select status, error_message, failed_at from pgflow.step_tasks where step_slug = 'slow'$$,
                  $$values ('cancelled', null::text, null::timestamptz)$$, 'not retried, not failed');
select is((select count(*)::int from pgmq.q_f), 0, 'no message was brought back');
select is((select count(*)::int from realtime.messages where event = 'run:failed'), 1, 'run:failed was emitted once');

select * from finish();
rollback;
