-- Slug, type and dependency differences, each with its own message, compared index by index.
begin;
select plan(4);

select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('b')))),
  array['Step at index 0: slug differs ''a'' vs ''b'''], 'slug differs');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', step_type => 'map')))),
  array['Step at index 0: type differs ''single'' vs ''map'''], 'type differs');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('x'), pgflow_tests.step_shape('y'),
                                                pgflow_tests.step_shape('c', array['y', 'x']))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('x'), pgflow_tests.step_shape('y'),
                                                pgflow_tests.step_shape('c', array['x'])))),
  array['Step at index 2: dependencies differ [x, y] vs [x]'], 'dependencies differ (sorted, comma-joined)');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('b'), pgflow_tests.step_shape('a')))),
  array['Step at index 0: slug differs ''a'' vs ''b''', 'Step at index 1: slug differs ''b'' vs ''a'''],
  'the same steps in another order differ at each index');

select * from finish();
rollback;
