-- 200 tasks completed in reverse order still aggregate in task_index order.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', (select jsonb_agg(i) from generate_series(1, 200) i)) \gset

select pgflow_tests.complete_step_task(:'run', 'items', i, to_jsonb(i)) from generate_series(199, 0, -1) i \g /dev/null
select is((select output from pgflow.step_states), (select jsonb_agg(i order by i) from generate_series(0, 199) i),
          '0..199 in order');
select is((select status from pgflow.runs), 'completed', 'the run completed');

select * from finish();
rollback;
