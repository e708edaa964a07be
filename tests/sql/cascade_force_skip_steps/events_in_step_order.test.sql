-- One step:skipped event per skipped step, in step order (trigger first), each with flow_slug,
-- step_slug, status, skip_reason and skipped_at, on the run's topic.
begin;
select plan(3);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'top');
select pgflow.add_step('f', 'mid_b', array['top']);
select pgflow.add_step('f', 'mid_a', array['top']);
select pgflow.add_step('f', 'bottom', array['mid_a', 'mid_b']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
delete from realtime.messages;

select pgflow._cascade_force_skip_steps(:'run', 'top', 'condition_unmet') \g /dev/null
select results_eq($$select event, payload->>'step_slug', payload->>'skip_reason' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('step:top:skipped', 'top', 'condition_unmet'), ('step:mid_b:skipped', 'mid_b', 'dependency_skipped'),
                           ('step:mid_a:skipped', 'mid_a', 'dependency_skipped'), ('step:bottom:skipped', 'bottom', 'dependency_skipped')$$,
                  'events in step_index order');
select ok((select bool_and(payload->>'event_type' = 'step:skipped' and payload->>'status' = 'skipped'
                           and payload->>'flow_slug' = 'f' and payload->>'run_id' = (select run_id::text from pgflow.runs)
                           and (payload->>'skipped_at')::timestamptz = now())
           from realtime.messages), 'payloads carry event_type, status, flow_slug, run_id and skipped_at');
select is((select count(*)::int from realtime.messages where event not like 'step:%:skipped'), 0,
          'no other event (the run is not complete: nothing else changed)');

select * from finish();
rollback;
