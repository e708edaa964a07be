-- Since 0027 a wait's deadline is counted from the wall clock when the wait starts, not from
-- the start of the transaction that started it (a worker's complete_task transaction held open
-- made the deadline already past), and a sleep's `until` timestamp without an offset is read as
-- UTC, whatever the TimeZone of the session that starts the step (before, the same run input
-- gave a different wake time per session). An explicit offset is kept.
begin;
select plan(6);

-- This transaction began a while ago (its now()); the wait starts now.
select pg_sleep(0.05);
select pgflow_tests.setup_wait_flow('approval', '{"kind": "signal", "timeout": 60}');
select run_id as run from pgflow.start_flow('approval', '{}') \gset
select clock_timestamp() as t0 \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
select clock_timestamp() as t1 \gset
select ok((select wake_at between :'t0'::timestamptz + interval '60 s' and :'t1'::timestamptz + interval '60 s'
           from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'),
          'a signal''s timeout counts from when the wait started by the wall clock');
select ok((select wake_at > now() + interval '60 s' from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'),
          'not from the start of the transaction that started it');

select pgflow.create_flow('ship');
select pgflow.add_step('ship', 'quote');
select pgflow.add_wait_step('ship', 'ship_day', '{"kind": "sleep", "until": ["quote", "ship_at"]}', array['quote']);
create function pg_temp.wake_at_for(p_ship_at text, p_timezone text) returns timestamptz language plpgsql as $$
declare
  v_run uuid;
begin
  perform set_config('timezone', p_timezone, true);
  v_run := (select run_id from pgflow.start_flow('ship', '{}'));
  perform pgflow_tests.complete_step_task(v_run, 'quote', 0, jsonb_build_object('ship_at', p_ship_at));
  return (select wake_at from pgflow.step_tasks where run_id = v_run and step_slug = 'ship_day');
end;
$$;
select is(pg_temp.wake_at_for('2099-01-02T03:04:05', 'America/New_York'), '2099-01-02T03:04:05Z'::timestamptz,
          'a timestamp without an offset is UTC in a session in New York');
select is(pg_temp.wake_at_for('2099-01-02 03:04:05', 'Asia/Tokyo'), '2099-01-02T03:04:05Z'::timestamptz,
          'and in one in Tokyo');
select is(pg_temp.wake_at_for('2099-01-02', 'Asia/Tokyo'), '2099-01-02T00:00:00Z'::timestamptz,
          'a date alone is midnight UTC');
select is(pg_temp.wake_at_for('2099-01-02T03:04:05+02:00', 'America/New_York'), '2099-01-02T01:04:05Z'::timestamptz,
          'an explicit offset is kept');

select * from finish();
rollback;
