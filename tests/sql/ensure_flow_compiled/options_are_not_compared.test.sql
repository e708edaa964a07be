-- Shape options are used only when creating: different options still verify and are not applied.
begin;
select plan(3);

select pgflow.ensure_flow_compiled('f', jsonb_build_object(
  'steps', jsonb_build_array(pgflow_tests.step_shape('a', options => '{"timeout": 10}')),
  'options', '{"maxAttempts": 2}'::jsonb), pgflow.worker_protocol());

select is(pgflow.ensure_flow_compiled('f', jsonb_build_object(
    'steps', jsonb_build_array(pgflow_tests.step_shape('a', options => '{"timeout": 99, "startDelay": 5}')),
    'options', '{"maxAttempts": 8, "timeout": 3}'::jsonb), pgflow.worker_protocol())->>'status',
  'verified', 'different options verify');
select is((select opt_max_attempts from pgflow.flows where flow_slug = 'f'), 2, 'flow options unchanged');
select results_eq($$select opt_timeout, opt_start_delay from pgflow.steps where flow_slug = 'f'$$,
                  $$values (10, null::int)$$, 'step options unchanged');

select * from finish();
rollback;
