-- Different step counts: "Step count differs", then a "missing in ... shape" line per extra index.
begin;
select plan(2);

select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b'),
                                                pgflow_tests.step_shape('c')))),
  array['Step count differs: 1 vs 3',
        'Step at index 1: missing in first shape (second has ''b'')',
        'Step at index 2: missing in first shape (second has ''c'')'],
  'the second shape has more steps');
select is(pgflow._compare_flow_shapes(
  jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b'))),
  '{"steps": []}'),
  array['Step count differs: 2 vs 0',
        'Step at index 0: missing in second shape (first has ''a'')',
        'Step at index 1: missing in second shape (first has ''b'')'],
  'the first shape has more steps');

select * from finish();
rollback;
