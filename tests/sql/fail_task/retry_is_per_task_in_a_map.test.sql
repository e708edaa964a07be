-- In a map step each task has its own attempts: a failing task retries while its siblings carry
-- on, and the step completes once every task has completed.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset

select pgflow_tests.fail_step_task(:'run', 'items', 1) \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"a"') \g /dev/null
select results_eq($$select task_index, status, attempts_count from pgflow.step_tasks order by task_index$$,
                  $$values (0, 'completed', 1), (1, 'queued', 1)$$, 'task 1 retries, task 0 completed');
select results_eq($$select status, remaining_tasks from pgflow.step_states$$, $$values ('started', 1)$$,
                  'the step waits for the retried task');
select pgflow_tests.complete_step_task(:'run', 'items', 1, '"b"') \g /dev/null
select results_eq($$select status, output from pgflow.step_states$$, $$values ('completed', '["a", "b"]'::jsonb)$$,
                  'the step completes after the retry');

select * from finish();
rollback;
