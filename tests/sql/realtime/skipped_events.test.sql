-- step:<slug>:skipped payloads: condition_unmet (with flow_slug), handler_failed (with
-- error_message) and dependency_skipped from a cascade (with flow_slug); the trigger step's
-- event comes before its cascade.
begin;
select plan(5);

select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('s', max_attempts => 1);
select pgflow.add_step('s', 'gated', required_input_pattern => '{"go": true}');
select pgflow.add_step('s', 'flaky', when_exhausted => 'skip-cascade');
select pgflow.add_step('s', 'child', array['flaky']);
select run_id as run from pgflow.start_flow('s', '{"go": false}') \gset

select is((select payload from realtime.messages where event = 'step:gated:skipped'),
          (select jsonb_build_object('event_type', 'step:skipped', 'run_id', ss.run_id, 'flow_slug', 's',
                                     'step_slug', 'gated', 'status', 'skipped', 'skip_reason', 'condition_unmet',
                                     'skipped_at', ss.skipped_at)
           from pgflow.step_states ss where ss.step_slug = 'gated'),
          'condition skip payload');

select pgflow_tests.ensure_worker('s');
select count(*) from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
select pgflow.fail_task(:'run', 'flaky', 0, 'broken');

select is((select payload from realtime.messages where event = 'step:flaky:skipped'),
          (select jsonb_build_object('event_type', 'step:skipped', 'run_id', ss.run_id, 'step_slug', 'flaky',
                                     'status', 'skipped', 'skip_reason', 'handler_failed', 'error_message', 'broken',
                                     'skipped_at', ss.skipped_at)
           from pgflow.step_states ss where ss.step_slug = 'flaky'),
          'handler_failed skip payload');
select is((select payload from realtime.messages where event = 'step:child:skipped'),
          (select jsonb_build_object('event_type', 'step:skipped', 'run_id', ss.run_id, 'flow_slug', 's',
                                     'step_slug', 'child', 'status', 'skipped', 'skip_reason', 'dependency_skipped',
                                     'skipped_at', ss.skipped_at)
           from pgflow.step_states ss where ss.step_slug = 'child'),
          'cascade skip payload');
select results_eq($$select event from pgflow_tests.realtime_events('$$ || :'run' || $$')$$,
                  $$values ('run:started'::text), ('step:gated:skipped'), ('step:flaky:started'),
                           ('step:flaky:skipped'), ('step:child:skipped'), ('run:completed')$$,
                  'the full sequence: skips before starts, trigger before cascade, then run:completed');
select is((select payload->'output' from realtime.messages where event = 'run:completed'), 'null'::jsonb,
          'a run whose leaves were all skipped completes with output null');

select * from finish();
rollback;
