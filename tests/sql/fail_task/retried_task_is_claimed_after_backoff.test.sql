-- A retried task is hidden during its backoff (a worker's read gets nothing); once the
-- message is visible again it is claimed as the next attempt, and completing it completes
-- the step normally.
begin;
select plan(4);
select pgflow.create_flow('f', base_delay => 5);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select is_empty($$select * from pgflow_tests.read_and_start('f')$$, 'hidden during the backoff');
select pgflow_tests.reset_message_visibility('f');
select results_eq($$select step_slug, task_index from pgflow_tests.read_and_start('f')$$,
                  $$values ('only', 0)$$, 'claimed again once visible');
select pgflow.complete_task(:'run', 'only', 0, '"ok"') \g /dev/null
select results_eq($$select status, attempts_count, error_message, output from pgflow.step_tasks$$,
                  $$values ('completed', 2, 'boom', '"ok"'::jsonb)$$,
                  'completed on attempt 2 (the last error stays recorded)');
select is((select status from pgflow.runs), 'completed', 'the run completed');

select * from finish();
rollback;
