-- A flow that does not exist is created from the shape (protocol-2 signature): status
-- "compiled", no differences, and the flow's queue lower(flow_slug) is provisioned and reported.
begin;
select plan(5);

select is(pgflow.ensure_flow_compiled('fresh', jsonb_build_object(
    'steps', jsonb_build_array(pgflow_tests.step_shape('a', options => '{"timeout": 7}'),
                               pgflow_tests.step_shape('b', array['a'], 'map')),
    'options', '{"maxAttempts": 4}'::jsonb), pgflow.worker_protocol()),
  '{"status": "compiled", "differences": [], "mismatchKind": null, "flow_control": {}, "queue_mode": "flow", "queue_name": "fresh",
    "flow_alias": "fresh", "activation": "activated", "active_flow_slug": "fresh",
    "routes": [{"stepSlug": "a", "queueName": "fresh"}, {"stepSlug": "b", "queueName": "fresh"}]}'::jsonb,
  'returns compiled, the queue mode, the route and the activation of its self-alias');
select results_eq($$select step_slug, step_type, opt_timeout from pgflow.steps where flow_slug = 'fresh' order by step_index$$,
                  $$values ('a'::text, 'single'::text, 7), ('b', 'map', null)$$, 'the steps exist with their options');
select is((select opt_max_attempts from pgflow.flows where flow_slug = 'fresh'), 4, 'flow options are applied');
select ok(exists (select 1 from pgmq.list_queues() where queue_name = 'fresh'), 'the queue exists');
select is(array(select distinct queue_name from pgflow.steps where flow_slug = 'fresh'), array['fresh'],
          'every step routes to it');

select * from finish();
rollback;
