-- Since 0028: seconds spelled `60.0` (a whole number, as JSON from Python writes it) start a
-- wait like 60 (an integer cast refused them: every start of the step failed, 22P02). And a run
-- whose timer cannot end its tasks holds back no other run's timers: before, its error undid
-- the whole batch, and as it stayed due, every later call failed too. Its tasks are tried
-- again a minute later, with a WARNING.
begin;
select plan(8);

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

-- Two sleeping runs, both due. Ending the broken one's sleep starts a step whose queue is gone.
select pgflow_tests.setup_wait_flow('broken', '{"kind": "sleep", "seconds": 3600}');
select pgflow_tests.setup_wait_flow('healthy', '{"kind": "sleep", "seconds": 3600}');
select run_id as broken_run from pgflow.start_flow('broken', '{}') \gset
select run_id as healthy_run from pgflow.start_flow('healthy', '{}') \gset
select pgflow_tests.complete_step_task(:'broken_run', 'draft', 0, '"d"');
select pgflow_tests.complete_step_task(:'healthy_run', 'draft', 0, '"d"');
select pgmq.drop_queue('broken');
update pgflow.step_tasks set wake_at = now() - interval '2 s' where run_id = :'broken_run' and step_slug = 'approve';
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'healthy_run' and step_slug = 'approve';

select is(pgflow.wake_waiting_tasks(), 1, 'the timers end the healthy run''s sleep although the broken run''s raised');
select is(pgflow_tests.task_statuses(:'healthy_run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'the healthy run moved on');
select is(pgflow_tests.task_statuses(:'broken_run'), array['approve/0: waiting', 'draft/0: completed'],
          'the broken run''s changes are undone: its sleep still waits');
select ok((select wake_at > clock_timestamp() + interval '50 s' from pgflow.step_tasks
           where run_id = :'broken_run' and step_slug = 'approve'),
          'to be tried again a minute later');
select is(pgflow.wake_waiting_tasks(), 0, 'so the next call finds nothing due and fails nothing');

select * from finish();
rollback;
