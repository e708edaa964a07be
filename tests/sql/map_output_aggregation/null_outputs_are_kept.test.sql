-- Null outputs (SQL NULL or JSON null) keep their position in the array.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3, 4]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 0, '"first"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 1, null) \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 2, 'null') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 3, '"last"') \g /dev/null
select is((select output from pgflow.step_states), '["first", null, null, "last"]'::jsonb, 'nulls in place');

select * from finish();
rollback;
