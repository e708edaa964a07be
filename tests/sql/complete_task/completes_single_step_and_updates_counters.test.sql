-- Completing the only task of a single step completes the step (remaining_tasks 0, output,
-- completed_at), decrements the run's remaining_steps and the dependent's remaining_deps.
begin;
select plan(5);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select results_eq(
  $$select status, remaining_tasks, remaining_deps from pgflow.step_states where step_slug = 'first'$$,
  $$values ('started', 1, 0)$$, 'before: first is started with one remaining task');

select pgflow_tests.complete_step_task(:'run', 'first', 0, '{"n": 1}') \g /dev/null

select results_eq(
  $$select status, remaining_tasks, output from pgflow.step_states where step_slug = 'first'$$,
  $$values ('completed', 0, '{"n": 1}'::jsonb)$$, 'first is completed with remaining_tasks 0 and its output');
select ok((select completed_at >= started_at from pgflow.step_states where step_slug = 'first'),
          'the step has completed_at after started_at');
select is((select remaining_steps from pgflow.runs), 2, 'the run has one step fewer to go');
select is((select remaining_deps from pgflow.step_states where step_slug = 'second'), 0,
          'the dependent lost its pending dependency');

select * from finish();
rollback;
