-- A worker may pass the route map it derived; it must equal the route SQL derives, or the call
-- fails naming both (a worker bug, not a deployment difference) and nothing is written.
begin;
select plan(3);

select throws_ok($$select pgflow.ensure_flow_compiled('routed', jsonb_build_object('steps', jsonb_build_array(
                     pgflow_tests.step_shape('a'))), pgflow.worker_protocol(), 'step',
                     '[{"stepSlug": "a", "queueName": "routed__x"}]')$$,
                 '22023', 'The route map of the worker for flow "routed" differs from the route pgflow derives: [{"stepSlug": "a", "queueName": "routed__x"}] vs [{"stepSlug": "a", "queueName": "routed__a"}]', 'a route map that differs is refused');
select is((select count(*) from pgflow.flows) + (select count(*) from pgmq.meta), 0::bigint, 'nothing was written');
select is(pgflow.ensure_flow_compiled('routed', jsonb_build_object('steps', jsonb_build_array(
            pgflow_tests.step_shape('a'))), pgflow.worker_protocol(), 'step',
            '[{"stepSlug": "a", "queueName": "routed__a"}]')->>'status',
          'compiled', 'the derived route map compiles');

select * from finish();
rollback;
