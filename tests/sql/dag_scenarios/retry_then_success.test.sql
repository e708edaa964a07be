-- A handler fails twice and succeeds on the third attempt: between attempts the message is
-- hidden for the backoff (2 s, then 4 s with base_delay 1), and the run completes normally
-- with no failure events.
begin;
select plan(8);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 3, base_delay => 1);
select pgflow.add_step('f', 'flaky');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select clock_timestamp() as t0 \gset
select pgflow.fail_task(run_id, step_slug, task_index, 'attempt 1 failed') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('flaky', 'f', 2, :'t0', :'t1'), 'backoff 2 s after attempt 1');
select is_empty($$select * from pgflow_tests.read_and_start('f', 30, 10)$$, 'hidden during the backoff');
select pgflow_tests.reset_message_visibility('f');

select clock_timestamp() as t0 \gset
select pgflow.fail_task(run_id, step_slug, task_index, 'attempt 2 failed') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('flaky', 'f', 4, :'t0', :'t1'), 'backoff 4 s after attempt 2');
select pgflow_tests.reset_message_visibility('f');

select pgflow.complete_task(run_id, step_slug, task_index, '"finally"') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null
select results_eq($$select status, attempts_count, output, error_message from pgflow.step_tasks$$,
                  $$values ('completed', 3, '"finally"'::jsonb, 'attempt 2 failed')$$, 'completed on attempt 3');
select results_eq($$select status, output from pgflow.step_states$$, $$values ('completed', '"finally"'::jsonb)$$, 'step completed');
select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"flaky": "finally"}'::jsonb)$$,
                  'run completed');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 1::bigint), 'one message throughout, archived');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:flaky:started'), ('step:flaky:completed'), ('run:completed')$$,
                  'no failure events for retried attempts');

select * from finish();
rollback;
