-- complete_task for a cancelled task of a failed run changes nothing: the task stays cancelled
-- without output, the step does not progress, no dependent starts, the run stays failed.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'slow');
select pgflow.add_step('f', 'after_slow', array['slow']);
select pgflow.add_step('f', 'breaks');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'slow') \g /dev/null
select pgflow_tests.fail_step_task(:'run', 'breaks') \g /dev/null

select results_eq($$select status, output, completed_at from pgflow.complete_task((select run_id from pgflow.runs), 'slow', 0, '"late"')$$,
                  $$values ('cancelled', null::jsonb, null::timestamptz)$$, 'returns the cancelled row unchanged');
select results_eq($$select status, remaining_tasks, output from pgflow.step_states where step_slug = 'slow'$$,
                  $$values ('started', 1, null::jsonb)$$, 'the step did not progress');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'after_slow'), 0, 'no dependent task');
select results_eq($$select status, remaining_steps, completed_at from pgflow.runs$$,
                  $$values ('failed', 3, null::timestamptz)$$, 'the run stays failed');

select * from finish();
rollback;
