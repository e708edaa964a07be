-- A task that fails for good has its message archived; a retried task keeps its message in the
-- queue.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as msg from pgflow.step_tasks \gset

select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select is(array(select pgflow_tests.queue_msg_ids('f')), array[:msg::bigint], 'after the retry: still queued');
select pgflow_tests.fail_step_task(:'run', 'only') \g /dev/null
select is(array(select pgflow_tests.queue_msg_ids('f')), '{}'::bigint[], 'after the final failure: gone from the queue');
select is(array(select pgflow_tests.queue_msg_ids('f', true)), array[:msg::bigint], '... and in the archive');

select * from finish();
rollback;
