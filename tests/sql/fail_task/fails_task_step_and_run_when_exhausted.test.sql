-- The last allowed attempt failing (when_exhausted = fail, the default) fails the task, its step
-- and the run, each with failed_at, and the task and step with the error message.
begin;
select plan(5);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset

create temp table returned as select * from pgflow_tests.fail_step_task(:'run', 'only', 0, 'it broke');

select results_eq($$select status, error_message from returned$$, $$values ('failed', 'it broke')$$,
                  'returns the failed task');
select results_eq($$select status, attempts_count, error_message, (failed_at is not null) from pgflow.step_tasks$$,
                  $$values ('failed', 1, 'it broke', true)$$, 'the task is failed with failed_at and the error');
select results_eq($$select status, error_message, (failed_at is not null), remaining_tasks from pgflow.step_states$$,
                  $$values ('failed', 'it broke', true, 1)$$, 'the step is failed with failed_at and the error');
select results_eq($$select status, (failed_at is not null), completed_at, output, remaining_steps from pgflow.runs$$,
                  $$values ('failed', true, null::timestamptz, null::jsonb, 1)$$, 'the run is failed, not completed');
select ok((select t.failed_at >= t.started_at and s.failed_at >= s.started_at and r.failed_at >= r.started_at
           from pgflow.step_tasks t, pgflow.step_states s, pgflow.runs r),
          'failed_at is not before started_at on task, step and run');

select * from finish();
rollback;
