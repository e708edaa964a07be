-- A step skipped by when_exhausted = skip counts as done for the run (remaining_steps - 1) and
-- releases its dependents (remaining_deps - 1).
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'flaky', when_exhausted => 'skip');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'join', array['flaky', 'other']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'flaky') \g /dev/null
select is((select remaining_steps from pgflow.runs), 2, 'remaining_steps 3 -> 2');
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'join'$$,
                  $$values ('created', 1)$$, 'join lost one pending dependency and waits for other');
select pgflow_tests.complete_step_task(:'run', 'other') \g /dev/null
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'join'$$,
                  $$values ('started', 0)$$, 'join starts once other completes');

select * from finish();
rollback;
