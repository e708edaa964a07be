-- The completed task's message is archived (moved from the queue to its archive), and only that
-- message.
begin;
select plan(3);
select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{}') \gset
select message_id as msg_a from pgflow.step_tasks where step_slug = 'root_a' \gset
select message_id as msg_b from pgflow.step_tasks where step_slug = 'root_b' \gset

select pgflow_tests.complete_step_task(:'run', 'root_a') \g /dev/null

select is(array(select pgflow_tests.queue_msg_ids('two_roots', true)), array[:msg_a::bigint],
          'root_a''s message is archived');
select is(array(select pgflow_tests.queue_msg_ids('two_roots')), array[:msg_b::bigint],
          'root_b''s message is still in the queue');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'root_a' and message_id = :msg_a), 1,
          'the task keeps its message_id');

select * from finish();
rollback;
