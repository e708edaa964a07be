-- fail_task with attempts left puts the task back to queued (started_at cleared, error kept,
-- attempts_count unchanged); the step and the run stay started, and the same message stays in
-- the queue (it is not archived and nothing new is sent).
begin;
select plan(7);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select message_id as msg from pgflow.step_tasks where step_slug = 'first' \gset

create temp table returned as select * from pgflow_tests.fail_step_task(:'run', 'first', 0, 'first FAILED');

select results_eq($$select status, attempts_count, error_message from returned$$,
                  $$values ('queued', 1, 'first FAILED')$$, 'returns the requeued task');
select results_eq($$select status, attempts_count, error_message, started_at, failed_at from pgflow.step_tasks where step_slug = 'first'$$,
                  $$values ('queued', 1, 'first FAILED', null::timestamptz, null::timestamptz)$$,
                  'the task is queued again with the error and no started_at/failed_at');
select results_eq($$select status, remaining_tasks, error_message, failed_at from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('started', 1, null::text, null::timestamptz)$$, 'the step stays started');
select results_eq($$select status, remaining_steps, failed_at from pgflow.runs$$,
                  $$values ('started', 3, null::timestamptz)$$, 'the run stays started');
select is(array(select pgflow_tests.queue_msg_ids('sequential')), array[:msg::bigint],
          'the same message is still in the queue');
select is(array(select pgflow_tests.queue_msg_ids('sequential', true)), '{}'::bigint[], 'nothing archived');
select is((select message_id from pgflow.step_tasks where step_slug = 'first'), :msg::bigint,
          'the task keeps its message');

select * from finish();
rollback;
