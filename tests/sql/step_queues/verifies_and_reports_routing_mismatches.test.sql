-- An existing step-queued flow verifies against the same deployment. A different queue mode is
-- a routing mismatch (mismatchKind 'routing'), in both directions, and changes nothing outside
-- local development; a local database recompiles it into the new mode.
begin;
select plan(10);
set local pgflow.local = 'off';

select pgflow_tests.compile_step_flow('stepped', jsonb_build_array(
  pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])));
select pgflow.ensure_flow_compiled('plain', jsonb_build_object('steps', jsonb_build_array(
  pgflow_tests.step_shape('a'))), pgflow.worker_protocol());

select is(pgflow_tests.compile_step_flow('stepped', jsonb_build_array(
            pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])))->>'status',
          'verified', 'the same deployment verifies');

select is(pgflow.ensure_flow_compiled('stepped', jsonb_build_object('steps', jsonb_build_array(
            pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a']))),
            pgflow.worker_protocol(), 'flow') - 'routes' - 'queue_name',
          '{"status": "mismatch", "mismatchKind": "routing", "flow_control": {}, "queue_mode": "step",
            "differences": ["Queue mode differs: ''flow'' vs ''step''"],
            "flow_alias": "stepped", "activation": "active", "active_flow_slug": "stepped"}'::jsonb,
          'a plain-flow worker of a step-queued flow: routing mismatch');
select is(pgflow_tests.compile_step_flow('plain', jsonb_build_array(pgflow_tests.step_shape('a'))) - 'routes',
          '{"status": "mismatch", "mismatchKind": "routing", "flow_control": {}, "queue_mode": "flow", "queue_name": "plain",
            "differences": ["Queue mode differs: ''step'' vs ''flow''"],
            "flow_alias": "plain", "activation": "active", "active_flow_slug": "plain"}'::jsonb,
          'a step worker of a plain flow: routing mismatch');
select is(pgflow_tests.compile_step_flow('stepped', jsonb_build_array(
            pgflow_tests.step_shape('a'), pgflow_tests.step_shape('c', array['a'])))->>'mismatchKind',
          'shape', 'a shape difference is a shape mismatch');
select results_eq($$select flow_slug, queue_mode from pgflow.flows order by 1$$,
                  $$values ('plain', 'flow'), ('stepped', 'step')$$, 'mismatches change nothing');
select is(array(select queue_name::text from pgmq.meta order by 1),
          array['plain', 'stepped__a', 'stepped__b'], 'and no queue');

set local pgflow.local = 'on';
select run_id as run from pgflow.start_flow('plain', '{}') \gset
select is(pgflow_tests.compile_step_flow('plain', jsonb_build_array(pgflow_tests.step_shape('a'))) - 'routes',
          '{"status": "recompiled", "mismatchKind": "routing", "flow_control": {}, "queue_mode": "step", "queue_name": null,
            "differences": ["Queue mode differs: ''step'' vs ''flow''"],
            "flow_alias": "plain", "activation": "active", "active_flow_slug": "plain"}'::jsonb,
          'locally a mode change recompiles');
select is(array(select queue_name::text from pgmq.meta order by 1),
          array['plain__a', 'stepped__a', 'stepped__b'], 'the flow queue is dropped, the step queue created');
select is((select count(*) from pgflow.runs where flow_slug = 'plain'), 0::bigint, 'its runs were deleted');
select is(pgflow.ensure_flow_compiled('plain', jsonb_build_object('steps', jsonb_build_array(
            pgflow_tests.step_shape('a'))), pgflow.worker_protocol())->>'queue_mode', 'flow',
          'and back again');

select * from finish();
rollback;
