-- Each taskless completion emits step:completed (before the steps it releases), with
-- started_at, completed_at, remaining_tasks 0, remaining_deps 0 and output [].
begin;
select plan(3);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'm1', step_type => 'map');
select pgflow.add_step('f', 'm2', array['m1'], step_type => 'map');
select pgflow.add_step('f', 'after', array['m2']);
select run_id as run from pgflow.start_flow('f', '[]') \gset

select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:m1:completed'), ('step:m2:completed'), ('step:after:started')$$,
                  'run:started, then m1 and m2 completed in order, then after started');
select results_eq($$select payload->>'event_type', payload->>'step_slug', payload->>'status', payload->'output',
                           (payload->>'remaining_tasks')::int, (payload->>'remaining_deps')::int,
                           payload ? 'started_at', payload ? 'completed_at'
                    from realtime.messages where event = 'step:m2:completed'$$,
                  $$values ('step:completed', 'm2', 'completed', '[]'::jsonb, 0, 0, true, true)$$,
                  'step:completed payload');
select is((select payload->>'run_id' from realtime.messages where event = 'step:m1:completed'), :'run',
          'payload carries the run id');

select * from finish();
rollback;
