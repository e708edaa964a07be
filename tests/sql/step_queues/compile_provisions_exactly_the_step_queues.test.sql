-- Compiling a flow in queue mode step persists the mode and the route (steps.queue_name), and
-- provisions exactly one private queue per step - no default queue - in one transaction.
begin;
select plan(7);

select is(pgflow_tests.compile_step_flow('orderFlow', jsonb_build_array(
            pgflow_tests.step_shape('validate'),
            pgflow_tests.step_shape('ship', array['validate'], 'map'),
            pgflow_tests.step_shape('notify', array['validate']))),
          '{"status": "compiled", "differences": [], "mismatchKind": null, "flow_control": {}, "queue_mode": "step",
            "queue_name": null, "flow_alias": "orderFlow", "activation": "activated", "active_flow_slug": "orderFlow",
            "routes": [{"stepSlug": "validate", "queueName": "orderflow__validate"},
                       {"stepSlug": "ship", "queueName": "orderflow__ship"},
                       {"stepSlug": "notify", "queueName": "orderflow__notify"}]}'::jsonb,
          'compiled, with queue mode step and the route map');
select is((select queue_mode from pgflow.flows where flow_slug = 'orderFlow'), 'step', 'the queue mode is persisted');
select results_eq($$select step_slug, queue_name from pgflow.steps where flow_slug = 'orderFlow' order by step_index$$,
                  $$values ('validate', 'orderflow__validate'), ('ship', 'orderflow__ship'), ('notify', 'orderflow__notify')$$,
                  'the route is steps.queue_name');
select is(array(select queue_name::text from pgmq.meta order by 1),
          array['orderflow__notify', 'orderflow__ship', 'orderflow__validate'],
          'exactly the step queues exist: no default queue "orderflow"');
select is((select count(*) from pgmq.meta m where m.created_at = now()), 3::bigint,
          'all three were created by this compilation');
select is(pgflow._get_flow_shape('orderFlow'),
          jsonb_build_object('steps', jsonb_build_array(
            pgflow_tests.step_shape('validate'), pgflow_tests.step_shape('ship', array['validate'], 'map'),
            pgflow_tests.step_shape('notify', array['validate']))),
          'the shape is the same as a plain flow''s (the queue mode is beside it)');

select run_id as run from pgflow.start_flow('orderFlow', '{}') \gset
select is((select queue_name || ':' || (pgflow_tests.queue_counts(queue_name)).active
           from pgflow.step_tasks where run_id = :'run'),
          'orderflow__validate:1', 'a run''s first task goes to its step''s queue');

select * from finish();
rollback;
