-- In a local database (pgflow.local = on) a different shape deletes the flow with all its runs
-- and messages and recreates it: status "recompiled" with the differences.
begin;
select plan(6);

set local pgflow.local = 'on';
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is(pgflow.ensure_flow_compiled('sequential', jsonb_build_object('steps', jsonb_build_array(
    pgflow_tests.step_shape('first'), pgflow_tests.step_shape('second', array['first'], 'map')),
    'options', '{"timeout": 20}'::jsonb), pgflow.worker_protocol()),
  jsonb_build_object('status', 'recompiled', 'differences', jsonb_build_array(
    'Step count differs: 2 vs 3',
    'Step at index 1: type differs ''map'' vs ''single''',
    'Step at index 2: missing in first shape (second has ''last'')'), 'queue_name', 'sequential',
    'mismatchKind', 'shape', 'flow_control', '{}'::jsonb, 'queue_mode', 'flow',
    'flow_alias', 'sequential', 'activation', 'active', 'active_flow_slug', 'sequential', 'routes', jsonb_build_array(
      '{"stepSlug": "first", "queueName": "sequential"}'::jsonb, '{"stepSlug": "second", "queueName": "sequential"}'::jsonb)),
  'returns recompiled with the differences and the new route');
select results_eq($$select step_slug, step_type from pgflow.steps where flow_slug = 'sequential' order by step_index$$,
                  $$values ('first'::text, 'single'::text), ('second', 'map')$$, 'the new shape is stored');
select is((select opt_timeout from pgflow.flows where flow_slug = 'sequential'), 20,
          'the flow was recreated with the shape''s options');
select is((select count(*) from pgflow.runs), 0::bigint, 'the old runs are gone');
select is((select count(*) from pgflow.step_tasks) + (select count(*) from pgflow.step_states), 0::bigint,
          'their step states and tasks are gone');
select is((pgflow_tests.queue_counts('sequential')).active, 0::bigint,
          'the queue was recreated empty');

select * from finish();
rollback;
