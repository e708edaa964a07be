-- A map step's stored output is the array of its task outputs by task_index.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset
select pgflow_tests.complete_step_task(:'run', 'items', 1, '"second"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"first"') \g /dev/null

select is((select output from pgflow.step_states), '["first", "second"]'::jsonb, 'ordered array');

select * from finish();
rollback;
