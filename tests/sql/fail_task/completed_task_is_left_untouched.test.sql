-- fail_task for a task that already completed changes nothing: the task keeps its output, the
-- step and the run their progress.
begin;
select plan(3);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'first', 0, '"done"') \g /dev/null

select results_eq($$select status, output, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'first', 0, 'late error')$$,
                  $$values ('completed', '"done"'::jsonb, null::text)$$, 'returns the completed row unchanged');
select results_eq($$select status, output from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('completed', '"done"'::jsonb)$$, 'the step stays completed');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('started', 2)$$,
                  'the run is unchanged');

select * from finish();
rollback;
