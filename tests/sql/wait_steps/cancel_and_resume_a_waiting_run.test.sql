-- Run control handles waiting steps: cancelling a run cancels its waiting tasks (a signal is
-- then refused, the timers ignore them); resuming it makes them wait again with a new deadline,
-- and so does resuming a run whose wait timed out. A new signal then completes the wait.
-- retry_run starts a new run, whose waits start afresh (and take none of the old run's signals).
begin;
select plan(14);

select pgflow_tests.setup_wait_flow('approval', '{"kind": "signal", "timeout": 60}');
select run_id as run from pgflow.start_flow('approval', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');

select is(pgflow.cancel_run(:'run', 'changed my mind'), true, 'a waiting run is cancelled');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: cancelled', 'draft/0: completed'],
          'its waiting task is cancelled');
select throws_like(format($$select pgflow.send_signal(%L, 'approve', 'too-late')$$, :'run'),
                   'Run "%" is failed: the signal for step "approve" of run "%" is refused',
                   'a signal is refused (naming no signal id, since 0031)');
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'run' and step_slug = 'approve';
select is(pgflow.wake_waiting_tasks(), 0, 'the timers ignore a cancelled wait');

update pgflow.step_tasks set wake_at = null where run_id = :'run' and step_slug = 'approve';
select clock_timestamp() as t0 \gset
select is((pgflow.resume_run(:'run')).status, 'started', 'the run resumes');
select clock_timestamp() as t1 \gset
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: waiting', 'draft/0: completed'], 'its task waits again');
select ok((select wake_at between :'t0'::timestamptz + interval '60 s' and :'t1'::timestamptz + interval '60 s'
           from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'),
          'with a new deadline (60 s from the resume, by the wall clock)');

update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'run' and step_slug = 'approve';
select is(pgflow.wake_waiting_tasks(), 1, '(it times out)');
select is((pgflow.resume_run(:'run')).status, 'started', 'a run whose wait timed out resumes too');
select is(pgflow.send_signal(:'run', 'approve', 'second-try', '"approved"'), 'delivered', 'and a signal completes the wait');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'the run goes on');

select pgflow.cancel_run(:'run');
select pgflow.retry_run(:'run') as retried \gset
select pgflow_tests.complete_step_task(:'retried', 'draft', 0, '"d2"');
select is(pgflow_tests.task_statuses(:'retried'), array['approve/0: waiting', 'draft/0: completed'],
          'a retried run''s wait waits afresh');
select is(pgflow.send_signal(:'retried', 'approve', 'second-try', '"again"'), 'delivered',
          'a signal id the old run used is new to the retried run');
select is((select output from pgflow.step_states where run_id = :'retried' and step_slug = 'approve'), '"again"'::jsonb,
          'and completes its wait');

select * from finish();
rollback;
