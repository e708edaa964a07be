-- When a run fails, every queued or started task of the run becomes `cancelled` and its
-- message is archived; completed tasks keep their status.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'breaks');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"ok"') \g /dev/null
select pgflow_tests.start_task(:'run', 'items', 1) \g /dev/null

select pgflow_tests.fail_step_task(:'run', 'breaks') \g /dev/null
select results_eq($$select step_slug, task_index, status from pgflow.step_tasks order by step_slug, task_index$$,
                  $$values ('breaks', 0, 'failed'), ('items', 0, 'completed'), ('items', 1, 'cancelled'), ('items', 2, 'cancelled')$$,
                  'started and queued siblings are cancelled');
select is((select count(*)::int from pgmq.q_f), 0, 'the queue is empty');
select is(array(select pgflow_tests.queue_msg_ids('f', true)), array(select message_id from pgflow.step_tasks order by message_id),
          'every message is archived');
select results_eq($$select status, remaining_tasks from pgflow.step_states where step_slug = 'items'$$,
                  $$values ('started', 2)$$, 'the unfinished step keeps its state');

select * from finish();
rollback;
