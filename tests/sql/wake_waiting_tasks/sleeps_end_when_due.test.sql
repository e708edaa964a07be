-- A sleep completes when its time comes, with {"until": that time} as its output: `seconds`
-- after it starts (0: at once), or at the timestamp `until` finds in the step's input (in the
-- past: at once). A sleep whose `until` finds no ISO 8601 timestamp fails, naming the path.
begin;
select plan(10);

select pgflow_tests.setup_wait_flow('cool_off', '{"kind": "sleep", "seconds": 3600}');
select run_id as run from pgflow.start_flow('cool_off', '{}') \gset
select clock_timestamp() as t0 \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
select clock_timestamp() as t1 \gset
select ok((select wake_at between :'t0'::timestamptz + interval '3600 s' and :'t1'::timestamptz + interval '3600 s'
           from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'),
          'a sleep of 3600 s wakes 3600 s after it started (by the wall clock, since 0027)');
select is(pgflow.wake_waiting_tasks(), 0, 'and not before');
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'run' and step_slug = 'approve';
select is(pgflow.wake_waiting_tasks(), 1, 'when due, the timer ends it');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'),
          jsonb_build_object('until', now() - interval '1 s'), 'it completes with {"until": its wake time}');

select pgflow_tests.setup_wait_flow('no_pause', '{"kind": "sleep", "seconds": 0}');
select run_id as run0 from pgflow.start_flow('no_pause', '{}') \gset
select pgflow_tests.complete_step_task(:'run0', 'draft', 0, '"d"');
select is(pgflow_tests.task_statuses(:'run0'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'a sleep of 0 s completes as it starts');

select pgflow.create_flow('ship');
select pgflow.add_step('ship', 'quote');
select pgflow.add_wait_step('ship', 'ship_day', '{"kind": "sleep", "until": ["quote", "ship_at"]}', array['quote']);
select run_id as later from pgflow.start_flow('ship', '{}') \gset
select pgflow_tests.complete_step_task(:'later', 'quote', 0, '{"ship_at": "2099-01-02T03:04:05Z"}');
select is((select wake_at from pgflow.step_tasks where run_id = :'later' and step_slug = 'ship_day'),
          '2099-01-02T03:04:05Z'::timestamptz, 'a sleep until a dependency''s timestamp wakes then');
select run_id as past from pgflow.start_flow('ship', '{}') \gset
select pgflow_tests.complete_step_task(:'past', 'quote', 0, '{"ship_at": "2001-01-01 00:00:00+00"}');
select is((select output from pgflow.step_states where run_id = :'past' and step_slug = 'ship_day'),
          '{"until": "2001-01-01T00:00:00+00:00"}'::jsonb, 'a timestamp in the past completes it at once');
select run_id as bad from pgflow.start_flow('ship', '{}') \gset
select pgflow_tests.complete_step_task(:'bad', 'quote', 0, '{"ship_at": "tomorrow-SECRET"}');
select is((select status || ': ' || error_message from pgflow.step_states where run_id = :'bad' and step_slug = 'ship_day'),
          'failed: Sleep step "ship_day" found no ISO 8601 timestamp at quote.ship_at of its input (found a JSON string)',
          'a value that is not an ISO 8601 timestamp fails the step, naming the path and the value''s JSON type, never the value (since 0031)');
select is((select count(*)::int from pgflow.step_tasks where run_id = :'bad' and error_message like '%SECRET%'), 0,
          'the value is in no task''s error either');
select is((select status from pgflow.runs where run_id = :'bad'), 'failed', 'and the run');

select * from finish();
rollback;
