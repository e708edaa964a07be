-- A wait step publishes step:started and then step:waiting when its tasks start waiting, and
-- step:completed when the signal completes it (Supabase broadcasts, through the stub).
begin;
select plan(2);

select pgflow_tests.install_realtime_stub();
select pgflow_tests.setup_wait_flow('approval');
select run_id as run from pgflow.start_flow('approval', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
select pgflow.send_signal(:'run', 'approve', 'ok', '"yes"');

select is(array(select event from pgflow_tests.realtime_events(:'run') where event like 'step:approve:%'),
          array['step:approve:started', 'step:approve:waiting', 'step:approve:completed'],
          'the wait step''s events');
select is((select payload - 'started_at' from pgflow_tests.realtime_events(:'run') where event = 'step:approve:waiting'),
          jsonb_build_object('event_type', 'step:waiting', 'run_id', :'run', 'step_slug', 'approve',
                             'status', 'waiting', 'remaining_tasks', 1),
          'step:waiting carries the run, the step and how many tasks wait');

select * from finish();
rollback;
