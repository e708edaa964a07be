-- Since 0028: seconds spelled `60.0` (a whole number, as JSON from Python writes it) start a
-- wait like 60 (an integer cast refused them: every start of the step failed, 22P02). And a run
-- whose timers raise holds back no other: before, its error undid the whole call, and as it
-- stayed due, every later call failed too. It is set aside in timer_retries for a minute, its
-- wake_at kept, and tried again then; a limited step's admission is made inside the call, so a
-- failing one is caught there too instead of failing the call at commit.
begin;
select plan(25);

-- Seconds as a whole number with a fraction part.
select pgflow_tests.setup_wait_flow('decimal_wait', '{"kind": "signal", "timeout": 60.0}');
select run_id as decimal_run from pgflow.start_flow('decimal_wait', '{}') \gset
select lives_ok(format($$select pgflow_tests.complete_step_task(%L, 'draft', 0, '"d"')$$, :'decimal_run'),
                'a wait whose timeout is 60.0 starts');
select ok((select wake_at between now() + interval '59 s' and clock_timestamp() + interval '60 s'
           from pgflow.step_tasks where run_id = :'decimal_run' and step_slug = 'approve'),
          'and times out 60 s later');
select pgflow_tests.setup_wait_flow('decimal_sleep', '{"kind": "sleep", "seconds": 0.0}');
select run_id as nap_run from pgflow.start_flow('decimal_sleep', '{}') \gset
select pgflow_tests.complete_step_task(:'nap_run', 'draft', 0, '"d"');
select is(pgflow_tests.task_statuses(:'nap_run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'a sleep of 0.0 s completes as it starts');

-- Due sleeps of four runs. Ending the broken runs' sleeps starts a step whose queue is gone:
-- a plain step (the message is sent as it starts) and a limited one (the admission sends it).
create function pg_temp.sleeping_flow(p_slug text, p_flow_control jsonb) returns void language sql as $$
  select pgflow.ensure_flow_compiled(p_slug, jsonb_build_object('steps', jsonb_build_array(
           pgflow_tests.step_shape('nap', wait => '{"kind": "sleep", "seconds": 3600}'),
           pgflow_tests.step_shape('work', array['nap']))),
         pgflow.worker_protocol(), 'flow', null, null, p_flow_control);
$$;
select pg_temp.sleeping_flow('broken', null);
select pg_temp.sleeping_flow('broken_limited', '{"steps": {"work": {"concurrencyLimit": 1}}}');
select pg_temp.sleeping_flow('healthy', null);
select pg_temp.sleeping_flow('healthy_limited', '{"steps": {"work": {"concurrencyLimit": 1}}}');
select run_id as broken_run from pgflow.start_flow('broken', '{}') \gset
select run_id as broken_limited_run from pgflow.start_flow('broken_limited', '{}') \gset
select run_id as healthy_run from pgflow.start_flow('healthy', '{}') \gset
select run_id as healthy_limited_run from pgflow.start_flow('healthy_limited', '{}') \gset
select pgmq.drop_queue('broken');
select pgmq.drop_queue('broken_limited');
update pgflow.step_tasks set wake_at = now() - interval '1 s' where step_slug = 'nap';

select is(pgflow.wake_waiting_tasks(), 2, 'the timers end the healthy runs'' sleeps although the broken runs'' raised');
select is(pgflow_tests.task_statuses(:'healthy_run'), array['nap/0: completed', 'work/0: queued'],
          'the healthy run moved on');
select is((select gate || ' ' || (message_id is not null) from pgflow.step_tasks
           where run_id = :'healthy_limited_run' and step_slug = 'work'),
          'admitted true', 'the limited one too: its task was admitted in the call, its message sent');
select is(coalesce(pgflow._transaction_record('pgflow.gated_flows'), ''), '',
          'leaving the commit nothing to admit');
select is(pgflow_tests.task_statuses(:'broken_run'), array['nap/0: waiting'],
          'the broken run''s changes are undone: its sleep still waits');
select is(pgflow_tests.task_statuses(:'broken_limited_run'), array['nap/0: waiting'],
          'so are the broken limited run''s, whose admission raised');
select is((select wake_at from pgflow.step_tasks where run_id = :'broken_run'), now() - interval '1 s',
          'its wake_at is kept');
select is((select string_agg(tries || ' ' || (retry_at = now() + interval '1 minute') || ' ' || left(last_error, 5), ', '
                             order by run_id)
           from pgflow.timer_retries where run_id in (:'broken_run', :'broken_limited_run')),
          '1 true 42P01, 1 true 42P01', 'both are set aside for a minute, with the error');
select is((select count(*) from pgflow.timer_retries), 2::bigint, 'and only they');
select is(pgflow.wake_waiting_tasks(), 0, 'so the next call ends nothing and fails nothing');

-- A minute on, still broken: tried again, counted; then repaired, and through.
update pgflow.timer_retries set retry_at = now() - interval '1 s';
select is(pgflow.wake_waiting_tasks(), 0, 'tried again a minute on, both still raise');
select is((select string_agg(tries::text, ', ') from pgflow.timer_retries), '2, 2', 'each try is counted');
select pgmq.create('broken');
select pgmq.create('broken_limited');
update pgflow.timer_retries set retry_at = now() - interval '1 s';
select is(pgflow.wake_waiting_tasks(), 2, 'once the queues are back, the next try ends both sleeps');
select is(pgflow_tests.task_statuses(:'broken_run'), array['nap/0: completed', 'work/0: queued'],
          'the broken run moved on');
select is((select output from pgflow.step_states where run_id = :'broken_run' and step_slug = 'nap'),
          jsonb_build_object('until', now() - interval '1 s'), 'its sleep ends with the time it was due, not the retry''s');
select is((select count(*) from pgflow.timer_retries), 0::bigint, 'and the runs are no longer set aside');

-- Only a limited step's admission raises (the batch's settling went through): counted once.
select pgflow.cancel_run(:'broken_limited_run');  -- its task held the step's one slot
select run_id as limited_again from pgflow.start_flow('broken_limited', '{}') \gset
select run_id as healthy_again from pgflow.start_flow('healthy', '{}') \gset
select pgmq.drop_queue('broken_limited');
update pgflow.step_tasks set wake_at = now() - interval '1 s'
where run_id in (:'limited_again', :'healthy_again') and step_slug = 'nap';
select is(pgflow.wake_waiting_tasks(), 1, 'a batch whose admission raised counts only the sleeps that ended');
select is((select count(*) from pgflow.timer_retries where run_id = :'limited_again'), 1::bigint,
          'the run whose admission raised is set aside');
select pgflow.cancel_run(:'limited_again');

-- What the caller's transaction recorded for its commit before the call is admitted with the
-- call's own, in one pass in byte order.
select pgflow.ensure_flow_compiled('mine', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('only'))), pgflow.worker_protocol(), 'flow', null, null,
       '{"concurrencyLimit": 1}') is not null as compiled;
select pgflow.start_run('mine', '{}');
select ok('mine' = any(pgflow._transaction_record('pgflow.gated_flows')::text[]),
          'a start of a limited flow records it for the commit');
select run_id as later_nap from pgflow.start_flow('healthy_limited', '{}') \gset
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'later_nap' and step_slug = 'nap';
select is(pgflow.wake_waiting_tasks(), 1, 'a call in the same transaction ends a sleep of a limited flow');
select is((select gate from pgflow.step_tasks where flow_slug = 'mine'), 'admitted',
          'and admits the task the transaction queued before it');
select is(pgflow._transaction_record('pgflow.gated_flows'), null, 'leaving its commit nothing to admit');

select * from finish();
rollback;
