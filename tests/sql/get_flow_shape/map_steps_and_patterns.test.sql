-- stepType map and defined patterns appear as {"defined": true, "value": ...}.
begin;
select plan(3);

select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'each', array['items'], step_type => 'map',
                       required_input_pattern => '{"items": [1]}', when_unmet => 'skip-cascade');
select pgflow.add_step('f', 'guard', array['items'], forbidden_input_pattern => '{"items": []}',
                       when_unmet => 'fail', when_exhausted => 'skip-cascade');

select is(pgflow._get_flow_shape('f')->'steps'->0,
  pgflow_tests.step_shape('items', step_type => 'map'), 'a root map');
select is(pgflow._get_flow_shape('f')->'steps'->1,
  '{"slug": "each", "stepType": "map", "dependencies": ["items"], "whenUnmet": "skip-cascade",
    "whenExhausted": "fail", "requiredInputPattern": {"defined": true, "value": {"items": [1]}},
    "forbiddenInputPattern": {"defined": false}}'::jsonb,
  'a dependent map with a required pattern');
select is(pgflow._get_flow_shape('f')->'steps'->2,
  pgflow_tests.step_shape('guard', array['items'], when_unmet => 'fail', when_exhausted => 'skip-cascade',
                          forbidden => '{"items": []}'),
  'a forbidden pattern and both modes');

select * from finish();
rollback;
