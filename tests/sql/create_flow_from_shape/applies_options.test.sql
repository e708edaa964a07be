-- Flow options (maxAttempts, baseDelay, timeout) and step options (plus startDelay) are applied.
begin;
select plan(2);

select pgflow._create_flow_from_shape('opts', jsonb_build_object(
  'steps', jsonb_build_array(
    pgflow_tests.step_shape('tuned', options => '{"maxAttempts": 5, "baseDelay": 3, "timeout": 45, "startDelay": 10}'),
    pgflow_tests.step_shape('plain', array['tuned'])),
  'options', '{"maxAttempts": 7, "baseDelay": 2, "timeout": 90}'::jsonb));

select results_eq(
  $$select opt_max_attempts, opt_base_delay, opt_timeout from pgflow.flows where flow_slug = 'opts'$$,
  $$values (7, 2, 90)$$, 'flow options are applied');
select results_eq(
  $$select step_slug, opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay
    from pgflow.steps where flow_slug = 'opts' order by step_index$$,
  $$values ('tuned'::text, 5, 3, 45, 10), ('plain', null::int, null::int, null::int, null::int)$$,
  'step options are applied; a step without options inherits (NULL)');

select * from finish();
rollback;
