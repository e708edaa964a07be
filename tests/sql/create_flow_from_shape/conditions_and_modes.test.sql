-- Patterns are taken from {"defined": true, "value": …} wrappers; modes are passed through.
begin;
select plan(2);

select pgflow._create_flow_from_shape('cond', jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('a'),
  pgflow_tests.step_shape('b', array['a'], when_unmet => 'skip-cascade', when_exhausted => 'skip',
                          required => '{"a": {"ok": true}}'),
  pgflow_tests.step_shape('c', array['a'], 'map', when_unmet => 'fail', when_exhausted => 'skip-cascade',
                          forbidden => '{"a": {"bad": true}}'))));

select results_eq(
  $$select step_slug, required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted
    from pgflow.steps where flow_slug = 'cond' order by step_index$$,
  $$values ('a'::text, null::jsonb, null::jsonb, 'skip'::text, 'fail'::text),
           ('b', '{"a": {"ok": true}}', null, 'skip-cascade', 'skip'),
           ('c', null, '{"a": {"bad": true}}', 'fail', 'skip-cascade')$$,
  'patterns and modes are stored');

select pgflow._create_flow_from_shape('undef', '{"steps": [
  {"slug": "a", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail",
   "requiredInputPattern": {"defined": false, "value": {"x": 1}},
   "forbiddenInputPattern": {"defined": false}}]}');
select is((select required_input_pattern from pgflow.steps where flow_slug = 'undef'), null::jsonb,
          'a value under defined=false is ignored');

select * from finish();
rollback;
