-- Dependents' inputs come from step_states.output (no re-aggregation at claim time): what is
-- stored is what they get.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'after', array['items']);
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"a"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 1, '"b"') \g /dev/null

-- Changing a task row afterwards does not change what the dependent receives.
update pgflow.step_tasks set output = '"changed"' where step_slug = 'items' and task_index = 0;
select is((select output from pgflow.step_states where step_slug = 'items'), '["a", "b"]'::jsonb, 'stored output');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'after')$$,
                  $$values ('{"items": ["a", "b"]}'::jsonb)$$, 'the dependent reads the stored output');

select * from finish();
rollback;
