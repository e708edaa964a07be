-- Outside a local database a different shape changes nothing: status "mismatch" with the differences.
begin;
select plan(5);

set local pgflow.local = 'off';
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is(pgflow.ensure_flow_compiled('sequential', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first']),
    pgflow_tests.step_shape('last', array['first'], when_unmet => 'fail'))), pgflow.worker_protocol()),
  jsonb_build_object('status', 'mismatch', 'differences', jsonb_build_array(
    'Step at index 2: dependencies differ [first] vs [second]',
    'Step at index 2: whenUnmet differs ''fail'' vs ''skip'''), 'queue_name', 'sequential',
    'mismatchKind', 'shape', 'flow_control', '{}'::jsonb, 'queue_mode', 'flow',
    'flow_alias', 'sequential', 'activation', 'active', 'active_flow_slug', 'sequential', 'routes', jsonb_build_array(
      '{"stepSlug": "first", "queueName": "sequential"}'::jsonb, '{"stepSlug": "second", "queueName": "sequential"}'::jsonb,
      '{"stepSlug": "last", "queueName": "sequential"}'::jsonb)),
  'returns mismatch with the differences, the kind and the persisted route');
select results_eq($$select step_slug, when_unmet from pgflow.steps where flow_slug = 'sequential' order by step_index$$,
                  $$values ('first'::text, 'skip'::text), ('second', 'skip'), ('last', 'skip')$$,
                  'the stored steps are unchanged');
select results_eq($$select dep_slug, step_slug from pgflow.deps where flow_slug = 'sequential' order by step_slug$$,
                  $$values ('second'::text, 'last'::text), ('first', 'second')$$, 'the stored deps are unchanged');
select is((select status from pgflow.runs where run_id = :'run'), 'started', 'the run is untouched');
select is((pgflow_tests.queue_counts('sequential')).active, 1::bigint, 'its message is still queued');

select * from finish();
rollback;
