-- A signal to a waiting task completes it with the payload as the step's output, holding no
-- message or worker on the way; the dependents start with it and the run completes as usual.
begin;
select plan(10);

select pgflow_tests.setup_wait_flow('approval');
select run_id as run from pgflow.start_flow('approval', '{"doc": 7}') \gset
select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"the draft"');

select is(pgflow_tests.task_statuses(:'run'), array['approve/0: waiting', 'draft/0: completed'],
          'when draft completes, approve''s task waits');
select is((select message_id from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'), null,
          'with no queue message (no worker will ever claim it)');
select is((select status from pgflow.step_states where run_id = :'run' and step_slug = 'approve'), 'started',
          'its step is started');
select is((select wake_at from pgflow.step_tasks where run_id = :'run' and step_slug = 'approve'), null,
          'and, without a timeout, has no deadline');

select is(pgflow.send_signal(:'run', 'approve', 'approval-1', '{"approved": true, "by": "ann"}'), 'delivered',
          'the signal is delivered');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'),
          '{"approved": true, "by": "ann"}'::jsonb, 'its payload is the step''s output');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'and publish is queued');
select is((select input->'approve' from pgflow_tests.start_task(:'run', 'publish')),
          '{"approved": true, "by": "ann"}'::jsonb, 'publish gets the payload as its approve input');
select pgflow.complete_task(:'run', 'publish', 0, '"published"');
select is((select status from pgflow.runs where run_id = :'run'), 'completed', 'the run completes');
select is((select consumed_at is not null from pgflow.signals where run_id = :'run' and signal_id = 'approval-1'), true,
          'the signal is kept, consumed');

select * from finish();
rollback;
