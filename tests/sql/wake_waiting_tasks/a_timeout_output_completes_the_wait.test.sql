-- A wait with a timeoutOutput completes with it when it times out, and the run goes on.
begin;
select plan(3);

select pgflow_tests.setup_wait_flow('approval', '{"kind": "signal", "timeout": 3600, "timeoutOutput": {"approved": false}}');
select run_id as run from pgflow.start_flow('approval', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"d"');
update pgflow.step_tasks set wake_at = now() - interval '1 s' where run_id = :'run' and step_slug = 'approve';

select is(pgflow.wake_waiting_tasks(), 1, 'the timer ends the wait');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'),
          '{"approved": false}'::jsonb, 'the step completes with its timeoutOutput');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'and its dependent is queued');

select * from finish();
rollback;
