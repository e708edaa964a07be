-- fail_task for a task that is not started (here: queued after a retry, its backoff already
-- over) leaves it exactly as it is: no attempt counted, error unchanged, and no backoff applied
-- to its message (upstream re-hid the message of a task it had not changed).
begin;
select plan(4);
select pgflow.create_flow('f', base_delay => 10);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'run', 'only', 0, 'first error') \g /dev/null
select pgflow_tests.reset_message_visibility('f');

select results_eq($$select status, attempts_count, error_message from pgflow.fail_task((select run_id from pgflow.runs), 'only', 0, 'stray error')$$,
                  $$values ('queued', 1, 'first error')$$, 'returns the row unchanged');
select results_eq($$select status, attempts_count, error_message, started_at from pgflow.step_tasks$$,
                  $$values ('queued', 1, 'first error', null::timestamptz)$$, 'the task is unchanged');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('only', 'f')),
          'its message stays visible: no backoff was applied');
select results_eq($$select status from pgflow.step_states union all select status from pgflow.runs$$,
                  $$values ('started'), ('started')$$, 'step and run are unchanged');

select * from finish();
rollback;
