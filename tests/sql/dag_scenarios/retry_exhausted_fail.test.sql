-- Retries exhausted with when_exhausted = fail: the task, step and run fail with the last error;
-- the sibling's task is cancelled, its message archived, nothing else starts, and a late
-- result of the sibling changes nothing.
begin;
select plan(7);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f', max_attempts => 2, base_delay => 1);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', array['a']);
select pgflow.add_step('f', 'c');
select run_id as run from pgflow.start_flow('f', '{}') \gset

create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select pgflow.fail_task(run_id, step_slug, task_index, 'a: attempt 1') from c1 where step_slug = 'a' \g /dev/null
select pgflow_tests.reset_message_visibility('f');
select pgflow.fail_task(run_id, step_slug, task_index, 'a: attempt 2') from pgflow_tests.read_and_start('f', 30, 10) \g /dev/null

select results_eq($$select step_slug, status, attempts_count, error_message from pgflow.step_tasks order by step_slug$$,
                  $$values ('a', 'failed', 2, 'a: attempt 2'), ('c', 'cancelled', 1, null)$$, 'a failed, c cancelled');
select results_eq($$select step_slug, status, error_message from pgflow.step_states order by step_slug$$,
                  $$values ('a', 'failed', 'a: attempt 2'), ('b', 'created', null), ('c', 'started', null)$$, 'step states');
select results_eq($$select status, remaining_steps, output, (failed_at is not null) from pgflow.runs$$,
                  $$values ('failed', 3, null::jsonb, true)$$, 'the run failed');
select is((select (active, archived) from pgflow_tests.queue_counts('f')), (0::bigint, 2::bigint), 'both messages archived');

select pgflow.complete_task(run_id, step_slug, task_index, '"late"') from c1 where step_slug = 'c' \g /dev/null
select results_eq($$select status, output from pgflow.step_tasks where step_slug = 'c'$$,
                  $$values ('cancelled', null::jsonb)$$, 'c''s late result is ignored');
select is((select status from pgflow.runs), 'failed', 'the run stays failed');
select results_eq($$select event, payload->>'error_message' from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started', null), ('step:a:started', null), ('step:c:started', null),
                           ('step:a:failed', 'a: attempt 2'), ('run:failed', 'a: attempt 2')$$,
                  'events in order');

select * from finish();
rollback;
