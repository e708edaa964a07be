-- complete_task on a started task: the task becomes completed with completed_at and the
-- output, and the call returns that row.
begin;
select plan(6);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{"x": 1}') \gset
select pgflow_tests.start_task(:'run', 'first') \g /dev/null

create temp table returned as
select * from pgflow.complete_task(:'run', 'first', 0, '{"answer": 42}');

select is((select count(*)::int from returned), 1, 'returns one row');
select is((select status from returned), 'completed', 'the returned row is the completed task');
select is((select output from returned), '{"answer": 42}'::jsonb, 'the returned row carries the output');
select results_eq(
  $$select status, output from pgflow.step_tasks where step_slug = 'first'$$,
  $$values ('completed', '{"answer": 42}'::jsonb)$$,
  'the task row is completed with its output');
select ok((select completed_at is not null and failed_at is null from pgflow.step_tasks
           where step_slug = 'first'), 'completed_at is set, failed_at is not');
select is((select attempts_count from pgflow.step_tasks where step_slug = 'first'), 1,
          'attempts_count stays as the claim set it');

select * from finish();
rollback;
