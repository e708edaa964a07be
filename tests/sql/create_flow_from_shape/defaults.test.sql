-- Missing options take create_flow's defaults; missing step modes and patterns (shapes of
-- older upstream DSL versions) take upstream's: skip, fail, not defined.
begin;
select plan(4);

select pgflow._create_flow_from_shape('bare', '{"steps": [
  {"slug": "a", "stepType": "single", "dependencies": [], "whenUnmet": "skip", "whenExhausted": "fail",
   "requiredInputPattern": {"defined": false}, "forbiddenInputPattern": {"defined": false}}]}');

select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'bare'$$,
  $$values (3, 5, 60)$$, 'no options: defaults 3 / 5 / 60');
select results_eq(
  $$select when_unmet, when_exhausted, opt_max_attempts, opt_timeout from pgflow.steps where flow_slug = 'bare'$$,
  $$values ('skip'::text, 'fail'::text, null::int, null::int)$$,
  'modes as given; no step options: NULL');

select pgflow._create_flow_from_shape('partial', '{"steps": [], "options": {"timeout": 5}}');
select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'partial'$$,
  $$values (3, 5, 5)$$, 'only the given option is set, the others default');

select pgflow._create_flow_from_shape('nomodes', '{"steps": [
  {"slug": "a", "stepType": "single", "dependencies": []}]}');
select results_eq(
  $$select when_unmet, when_exhausted, required_input_pattern, forbidden_input_pattern from pgflow.steps where flow_slug = 'nomodes'$$,
  $$values ('skip'::text, 'fail'::text, null::jsonb, null::jsonb)$$,
  'a step without whenUnmet/whenExhausted/patterns gets skip, fail and no patterns');

select * from finish();
rollback;
