-- Outputs of any JSON type are aggregated as they are (objects, arrays, strings, numbers,
-- booleans).
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3, 4, 5]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', (i - 1)::int, o)
from unnest(array['{"k": [1, {"n": true}]}', '[1, [2]]', '"s"', '1.5', 'false']::jsonb[]) with ordinality u(o, i) \g /dev/null
select is((select output from pgflow.step_states), '[{"k": [1, {"n": true}]}, [1, [2]], "s", 1.5, false]'::jsonb,
          'every type kept as is');

select * from finish();
rollback;
