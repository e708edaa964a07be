-- _get_flow_shape returns {"steps": [...]} in step_index order with every compared key.
begin;
select plan(3);

select pgflow.create_flow('f', timeout => 5);
select pgflow.add_step('f', 'first', timeout => 10, start_delay => 3);
select pgflow.add_step('f', 'second', array['first'], when_exhausted => 'skip');

select is(pgflow._get_flow_shape('f'), '{"steps": [
  {"slug": "first", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail",
   "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}},
  {"slug": "second", "stepType": "single", "dependencies": ["first"], "whenUnmet": "skip", "whenExhausted": "skip",
   "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}]}'::jsonb,
  'the shape of a two-step flow');
select ok(not pgflow._get_flow_shape('f') ? 'options', 'no flow options are emitted');
select ok(not exists (select 1 from jsonb_array_elements(pgflow._get_flow_shape('f')->'steps') e where e ? 'options'),
          'no step options are emitted');

select * from finish();
rollback;
