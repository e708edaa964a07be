-- An existing flow with the same shape is "verified" and left untouched, runs and queue included.
begin;
select plan(4);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is(pgflow.ensure_flow_compiled('sequential', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first']),
    pgflow_tests.step_shape('last', array['second']))), pgflow.worker_protocol()),
  '{"status": "verified", "differences": [], "mismatchKind": null, "flow_control": {}, "queue_mode": "flow", "queue_name": "sequential",
    "flow_alias": "sequential", "activation": "active", "active_flow_slug": "sequential",
    "routes": [{"stepSlug": "first", "queueName": "sequential"}, {"stepSlug": "second", "queueName": "sequential"},
               {"stepSlug": "last", "queueName": "sequential"}]}'::jsonb, 'returns verified');
select is((select count(*) from pgflow.runs where run_id = :'run'), 1::bigint, 'the run is kept');
select is((pgflow_tests.queue_counts('sequential')).active, 1::bigint, 'the queued message is kept');
select is((select opt_timeout from pgflow.flows where flow_slug = 'sequential'), 1, 'the flow row is unchanged');

select * from finish();
rollback;
