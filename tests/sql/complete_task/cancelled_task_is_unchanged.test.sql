-- When a run fails, its other unfinished tasks are `cancelled`; a late complete_task for one of
-- them changes nothing: no output, no step completion, no dependent started, the run stays failed.
begin;
select plan(5);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select pgflow.add_step('f', 'after_b', array['b']);
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'b') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'a', 0, 'a broke') \g /dev/null

select results_eq($$select status, output from pgflow.complete_task((select run_id from pgflow.runs), 'b', 0, '"late"')$$,
                  $$values ('cancelled', null::jsonb)$$, 'the late call returns the cancelled row unchanged');
select results_eq($$select status, output from pgflow.step_tasks where step_slug = 'b'$$,
                  $$values ('cancelled', null::jsonb)$$, 'the task stays cancelled');
select results_eq($$select status, output, remaining_tasks from pgflow.step_states where step_slug = 'b'$$,
                  $$values ('started', null::jsonb, 1)$$, 'the step is not completed');
select results_eq($$select status, remaining_deps from pgflow.step_states where step_slug = 'after_b'$$,
                  $$values ('created', 1)$$, 'the dependent is not released or started');
select results_eq($$select status, remaining_steps, output from pgflow.runs$$,
                  $$values ('failed', 3, null::jsonb)$$, 'the run stays failed');

select * from finish();
rollback;
