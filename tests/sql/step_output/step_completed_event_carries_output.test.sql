-- step:completed from complete_task carries the stored (aggregated) output and completed_at.
begin;
select plan(2);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset
select pgflow_tests.complete_step_task(:'run', 'items', 1, '{"b": 2}') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '{"a": 1}') \g /dev/null

select results_eq($$select payload->>'event_type', payload->>'step_slug', payload->>'status', payload->'output'
                    from realtime.messages where event = 'step:items:completed'$$,
                  $$values ('step:completed', 'items', 'completed', '[{"a": 1}, {"b": 2}]'::jsonb)$$,
                  'one event with the aggregated output');
select is((select (payload->>'completed_at')::timestamptz from realtime.messages where event = 'step:items:completed'),
          (select completed_at from pgflow.step_states), 'completed_at matches the step');

select * from finish();
rollback;
