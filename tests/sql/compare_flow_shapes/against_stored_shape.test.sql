-- Comparing a local shape with the stored one (_get_flow_shape), as ensure_flow_compiled does.
begin;
select plan(2);

select pgflow_tests.setup_flow('sequential');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('first'),
    pgflow_tests.step_shape('second', array['first']), pgflow_tests.step_shape('last', array['second']))),
  pgflow._get_flow_shape('sequential')),
  '{}'::text[], 'the fixture matches its shape');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('first'),
    pgflow_tests.step_shape('second', array['first']))),
  pgflow._get_flow_shape('sequential')),
  array['Step count differs: 2 vs 3', 'Step at index 2: missing in first shape (second has ''last'')'],
  'a local shape without the last step');

select * from finish();
rollback;
