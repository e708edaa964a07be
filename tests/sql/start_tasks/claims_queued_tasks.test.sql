-- start_tasks claims the queued tasks behind the given messages: status started, attempt
-- counted, started_at set, worker recorded; it returns one step_task_record per claimed task.
begin;
select plan(5);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{"n": 1}') \gset
select message_id as msg from pgflow.step_tasks \gset
select pgflow_tests.ensure_worker('sequential');

select results_eq(
  format($$select flow_slug, run_id, step_slug, msg_id, task_index
           from pgflow.start_tasks('sequential', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :msg),
  format($$values ('sequential'::text, %L::uuid, 'first'::text, %s::bigint, 0)$$, :'run', :msg),
  'returns the claimed task');
select results_eq(
  $$select status, attempts_count, started_at = now(), last_worker_id from pgflow.step_tasks$$,
  $$values ('started'::text, 1, true, '11111111-1111-1111-1111-111111111111'::uuid)$$,
  'the task is started, with attempt 1, started_at and the worker');
select is((select status from pgflow.step_states where step_slug = 'first'), 'started', 'the step stays started');

-- After a retry the same message is claimed again: the attempt count grows.
select pgflow.fail_task(:'run', 'first', 0, 'try again');
select results_eq(
  format($$select task_index from pgflow.start_tasks('sequential', array[%s]::bigint[], '11111111-1111-1111-1111-111111111111')$$, :msg),
  $$values (0)$$, 'a retried (queued again) task can be claimed again');
select is((select attempts_count from pgflow.step_tasks), 2, 'attempts_count is 2');

select * from finish();
rollback;
