-- Upstream compares with != so a key missing on one side compares as equal. Ours reports it,
-- shown as <missing>.
begin;
select plan(6);

select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'whenUnmet')),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: whenUnmet differs ''<missing>'' vs ''skip'''], 'whenUnmet missing in the first shape');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'whenExhausted'))),
  array['Step at index 0: whenExhausted differs ''fail'' vs ''<missing>'''], 'whenExhausted missing in the second shape');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'stepType')),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: type differs ''<missing>'' vs ''single'''], 'stepType missing');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'slug')),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: slug differs ''<missing>'' vs ''a'''], 'slug missing');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'dependencies')),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a')))),
  array['Step at index 0: dependencies differ [<missing>] vs []'], 'dependencies missing');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a') - 'forbiddenInputPattern'))),
  array['Step at index 0: forbiddenInputPattern differs ''{"defined": false}'' vs ''<missing>'''],
  'a pattern wrapper missing');

select * from finish();
rollback;
