-- complete_task for a task that already failed (retries exhausted, run failed) changes nothing:
-- the task stays failed without output, the step and the run stay failed.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'run', 'only', 0, 'handler error') \g /dev/null

select results_eq($$select status, output, error_message from pgflow.complete_task((select run_id from pgflow.runs), 'only', 0, '"late"')$$,
                  $$values ('failed', null::jsonb, 'handler error')$$, 'returns the failed row unchanged');
select results_eq($$select status, output, completed_at from pgflow.step_tasks$$,
                  $$values ('failed', null::jsonb, null::timestamptz)$$, 'the task is still failed');
select results_eq($$select status, output from pgflow.step_states$$,
                  $$values ('failed', null::jsonb)$$, 'the step is still failed');
select results_eq($$select status, output, remaining_steps from pgflow.runs$$,
                  $$values ('failed', null::jsonb, 1)$$, 'the run is still failed');

select * from finish();
rollback;
