-- An empty array from the parent sets initial_tasks 0: the map completes with [] and no tasks.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'list', 0, '[]') \g /dev/null
select results_eq($$select initial_tasks, status, output from pgflow.step_states where step_slug = 'each'$$,
                  $$values (0, 'completed', '[]'::jsonb)$$, 'zero tasks, completed with []');
select is((select status from pgflow.runs), 'completed', 'the run completed');

select * from finish();
rollback;
