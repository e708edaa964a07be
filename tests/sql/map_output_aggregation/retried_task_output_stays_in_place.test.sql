-- A task that failed and was retried contributes its eventual output at its own index.
begin;
select plan(1);
select pgflow.create_flow('f', base_delay => 0);
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset

select pgflow_tests.fail_step_task(:'run', 'items', 1) \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"a"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 2, '"c"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 1, '"b (retry)"') \g /dev/null
select is((select output from pgflow.step_states), '["a", "b (retry)", "c"]'::jsonb, 'in place');

select * from finish();
rollback;
