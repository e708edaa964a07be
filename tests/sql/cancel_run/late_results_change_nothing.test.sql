-- A handler of a cancelled run that reports late changes nothing: a completion leaves the task
-- cancelled without output and starts nothing; a failure is not retried and brings no message
-- back.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 3);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select pgflow.add_step('f', 'after', array['a']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a') \g /dev/null
select pgflow_tests.start_task(:'run', 'b') \g /dev/null
select pgflow.cancel_run(:'run') \g /dev/null

select results_eq($$select status, output from pgflow.complete_task((select run_id from pgflow.runs), 'a', 0, '"late"')$$,
                  $$values ('cancelled', null::jsonb)$$, 'a late completion is ignored');
select results_eq($$select status, attempts_count, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'b', 0, 'late')$$,
                  $$values ('cancelled', 1, null::text)$$, 'a late failure is ignored');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'after'), 0, 'nothing started downstream');
select is((select (active, archived) from pgflow_tests.queue_counts('f'))::text, '(0,2)', 'no message came back');

select * from finish();
rollback;
