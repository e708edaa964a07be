-- Map tasks get the element at their task_index, raw (JSON nulls and nested values included):
-- from the run input for a root map, from the parent's output for a dependent map; flow_input
-- is NULL for maps. A single step after a map gets the whole aggregated array.
begin;
select plan(3);

select pgflow.create_flow('m');
select pgflow.add_step('m', 'root_map', step_type => 'map');
select pgflow.add_step('m', 'dep_map', array['root_map'], step_type => 'map');
select pgflow.add_step('m', 'total', array['dep_map']);
select run_id as run from pgflow.start_flow('m', '[1, null, {"k": [2]}, "s"]') \gset
select pgflow_tests.ensure_worker('m');

select results_eq(
  $$select task_index, input, flow_input from pgflow.start_tasks('m', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111')
    order by task_index$$,
  $$values (0, '1'::jsonb, null::jsonb), (1, 'null', null), (2, '{"k": [2]}', null), (3, '"s"', null)$$,
  'root map: element i of the run input, flow_input NULL');

select pgflow.complete_task(:'run', 'root_map', i, jsonb_build_object('i', i)) from generate_series(3, 0, -1) i;
select results_eq(
  $$select task_index, input, flow_input from pgflow.start_tasks('m', array(select message_id from pgflow.step_tasks where step_slug = 'dep_map'),
                                                                '11111111-1111-1111-1111-111111111111')
    order by task_index$$,
  $$values (0, '{"i": 0}'::jsonb, null::jsonb), (1, '{"i": 1}', null), (2, '{"i": 2}', null), (3, '{"i": 3}', null)$$,
  'dependent map: element i of the parent''s (ordered) output');

select pgflow.complete_task(:'run', 'dep_map', i, case when i = 1 then 'null'::jsonb else to_jsonb(i * 10) end)
from generate_series(0, 3) i;
select results_eq(
  $$select input from pgflow.start_tasks('m', array(select message_id from pgflow.step_tasks where step_slug = 'total'),
                                         '11111111-1111-1111-1111-111111111111')$$,
  $$values ('{"dep_map": [0, null, 20, 30]}'::jsonb)$$,
  'a single step after a map gets the whole array under the map''s slug');

select * from finish();
rollback;
