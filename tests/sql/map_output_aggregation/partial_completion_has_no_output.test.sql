-- While some tasks are pending the step has no output (each completed task keeps its own);
-- the dependents do not start.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'after', array['items']);
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 0, '"a"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 2, '"c"') \g /dev/null
select results_eq($$select status, remaining_tasks, output from pgflow.step_states where step_slug = 'items'$$,
                  $$values ('started', 1, null::jsonb)$$, 'no output yet');
select results_eq($$select task_index, output from pgflow.step_tasks where step_slug = 'items' order by task_index$$,
                  $$values (0, '"a"'::jsonb), (1, null), (2, '"c"')$$, 'task outputs are stored per task');
select is((select status from pgflow.step_states where step_slug = 'after'), 'created', 'after has not started');

select * from finish();
rollback;
