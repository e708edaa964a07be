-- A dependent map's initial_tasks is NULL (unknown) at start; when its single parent completes
-- with an array it becomes the array's length and the map starts one task per element.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select initial_tasks, remaining_tasks, status from pgflow.step_states where step_slug = 'each'$$,
                  $$values (null::int, null::int, 'created')$$, 'unknown at start');
select pgflow_tests.complete_step_task(:'run', 'list', 0, '["a", "b", "c"]') \g /dev/null
select results_eq($$select initial_tasks, remaining_tasks, status from pgflow.step_states where step_slug = 'each'$$,
                  $$values (3, 3, 'started')$$, 'three once list produced three elements');
select results_eq($$select task_index, status from pgflow.step_tasks where step_slug = 'each' order by task_index$$,
                  $$values (0, 'queued'), (1, 'queued'), (2, 'queued')$$, 'three queued tasks');
select results_eq($$select (message->>'task_index')::int from pgmq.q_f where message->>'step_slug' = 'each' order by msg_id$$,
                  $$values (0), (1), (2)$$, 'one message per task index');

select * from finish();
rollback;
