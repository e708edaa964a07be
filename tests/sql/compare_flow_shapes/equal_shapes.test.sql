-- Equal shapes give an empty array; dependency order and options are not compared.
begin;
select plan(4);

select is(pgflow._compare_flow_shapes('{"steps": []}', '{"steps": []}'), '{}'::text[], 'two empty shapes');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'),
                                                pgflow_tests.step_shape('b', array['a'], 'map'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'),
                                                pgflow_tests.step_shape('b', array['a'], 'map')))),
  '{}'::text[], 'identical shapes');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(
    jsonb_set(pgflow_tests.step_shape('c'), '{dependencies}', '["b", "a"]'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('c', array['a', 'b'])))),
  '{}'::text[], 'dependencies in another order are equal');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', options => '{"timeout": 5}')),
                     'options', '{"maxAttempts": 9}'::jsonb),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  '{}'::text[], 'flow and step options are never compared');

select * from finish();
rollback;
