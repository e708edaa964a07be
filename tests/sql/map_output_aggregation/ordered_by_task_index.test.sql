-- The map output lists task outputs by task_index, whatever order the tasks completed in.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '["a", "b", "c", "d", "e"]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', i, to_jsonb('out' || i))
from unnest(array[3, 0, 4, 2, 1]) i \g /dev/null
select is((select output from pgflow.step_states), '["out0", "out1", "out2", "out3", "out4"]'::jsonb,
          'ordered by task_index');
select is((select output from pgflow.runs), '{"items": ["out0", "out1", "out2", "out3", "out4"]}'::jsonb,
          'the run output holds the ordered array');

select * from finish();
rollback;
