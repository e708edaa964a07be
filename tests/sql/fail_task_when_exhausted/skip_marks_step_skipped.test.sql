-- when_exhausted = skip: once retries run out the task is failed and its step is skipped with
-- skip_reason handler_failed, the error message, skipped_at and remaining_tasks NULL; the run
-- goes on.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'flaky', when_exhausted => 'skip');
select pgflow.add_step('f', 'other');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status, error_message from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'flaky', 0, 'gave up')$$,
                  $$values ('failed', 'gave up')$$, 'the task itself is failed');
select results_eq($$select status, skip_reason, error_message, remaining_tasks, (skipped_at is not null), failed_at, output
                    from pgflow.step_states where step_slug = 'flaky'$$,
                  $$values ('skipped', 'handler_failed', 'gave up', null::int, true, null::timestamptz, null::jsonb)$$,
                  'the step is skipped (handler_failed) with the error');
select results_eq($$select status, failed_at from pgflow.runs$$, $$values ('started', null::timestamptz)$$,
                  'the run is not failed');
select results_eq($$select status from pgflow.step_states where step_slug = 'other'$$, $$values ('started')$$,
                  'the other step is unaffected');

select * from finish();
rollback;
