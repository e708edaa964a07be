-- complete_task for a task that was never claimed (queued) changes nothing: the task, its step,
-- the run and the message stay as they are; the unchanged row is returned.
begin;
select plan(5);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select results_eq($$select status, output from pgflow.complete_task((select run_id from pgflow.runs), 'first', 0, '{"x": 1}')$$,
                  $$values ('queued', null::jsonb)$$, 'returns the task row unchanged (queued, no output)');
select results_eq($$select status, attempts_count, completed_at from pgflow.step_tasks where step_slug = 'first'$$,
                  $$values ('queued', 0, null::timestamptz)$$, 'the task is still queued');
select results_eq($$select status, remaining_tasks from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('started', 1)$$, 'the step is unchanged');
select is((select remaining_steps from pgflow.runs), 3, 'the run counter is unchanged');
select is((select count(*)::int from pgmq.q_sequential), 1, 'the message is still in the queue');

select * from finish();
rollback;
