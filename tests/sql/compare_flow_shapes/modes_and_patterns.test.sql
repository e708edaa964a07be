-- whenUnmet, whenExhausted and the two patterns are compared; several differences of one step
-- are all reported.
begin;
select plan(6);

select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', when_unmet => 'fail'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: whenUnmet differs ''fail'' vs ''skip'''], 'whenUnmet differs');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', when_exhausted => 'skip-cascade')))),
  array['Step at index 0: whenExhausted differs ''fail'' vs ''skip-cascade'''], 'whenExhausted differs');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', required => '{"x": 1}'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: requiredInputPattern differs ''{"value": {"x": 1}, "defined": true}'' vs ''{"defined": false}'''],
  'requiredInputPattern differs');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', forbidden => '{"x": 1}'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a', forbidden => '{"x": 2}')))),
  array['Step at index 0: forbiddenInputPattern differs ''{"value": {"x": 1}, "defined": true}'' vs ''{"value": {"x": 2}, "defined": true}'''],
  'forbiddenInputPattern differs (values compared as JSON)');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('a', step_type => 'map', when_unmet => 'fail', required => '{"k": true}'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: type differs ''map'' vs ''single''',
        'Step at index 0: whenUnmet differs ''fail'' vs ''skip''',
        'Step at index 0: requiredInputPattern differs ''{"value": {"k": true}, "defined": true}'' vs ''{"defined": false}'''],
  'every difference of one step is listed');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('x'),
    pgflow_tests.step_shape('b', array['x'], when_exhausted => 'skip', forbidden => '{"k": 1}'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('x'),
    pgflow_tests.step_shape('a', step_type => 'map', when_unmet => 'fail')))),
  array['Step at index 1: slug differs ''b'' vs ''a''',
        'Step at index 1: type differs ''single'' vs ''map''',
        'Step at index 1: dependencies differ [x] vs []',
        'Step at index 1: whenUnmet differs ''skip'' vs ''fail''',
        'Step at index 1: whenExhausted differs ''skip'' vs ''fail''',
        'Step at index 1: forbiddenInputPattern differs ''{"value": {"k": 1}, "defined": true}'' vs ''{"defined": false}'''],
  'differences of one step come in upstream''s order: slug, type, dependencies, modes, patterns');

select * from finish();
rollback;
