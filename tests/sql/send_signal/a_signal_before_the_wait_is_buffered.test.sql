-- A signal sent before its step waits is buffered, and the step takes it the moment it starts
-- waiting: the run goes on without anyone sending it again.
begin;
select plan(6);

select pgflow_tests.setup_wait_flow('approval');
select run_id as run from pgflow.start_flow('approval', '{}') \gset

select is(pgflow.send_signal(:'run', 'approve', 'early', '"yes"'), 'buffered', 'a signal for a step not started is buffered');
select is((select consumed_at from pgflow.signals where run_id = :'run'), null, 'kept, not consumed');
select is(pgflow_tests.task_statuses(:'run'), array['draft/0: queued'], '(approve has no task yet)');

select pgflow_tests.complete_step_task(:'run', 'draft', 0, '"the draft"');
select is((select output from pgflow.step_states where run_id = :'run' and step_slug = 'approve'), '"yes"'::jsonb,
          'when approve starts waiting, it takes the buffered signal and completes');
select is(pgflow_tests.task_statuses(:'run'), array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'],
          'in the same transaction as draft''s result: publish is queued');
select is((select consumed_at is not null from pgflow.signals where run_id = :'run'), true, 'the signal is consumed');

select * from finish();
rollback;
