-- A dependent map starts with one task and one message per element of its parent's output;
-- a map after a map gets one task per parent task.
begin;
select plan(5);

select pgflow.create_flow('m');
select pgflow.add_step('m', 'list');
select pgflow.add_step('m', 'each', array['list'], step_type => 'map');
select pgflow.add_step('m', 'again', array['each'], step_type => 'map');
select run_id as run from pgflow.start_flow('m', '{}') \gset
select pgflow.start_tasks('m', array(select message_id from pgflow.step_tasks), (pgflow_tests.ensure_worker('m')).worker_id);
select pgflow.complete_task(:'run', 'list', 0, '["a", "b", "c"]');

select results_eq($$select status, initial_tasks, remaining_tasks from pgflow.step_states where step_slug = 'each'$$,
                  $$values ('started'::text, 3, 3)$$, 'the map is sized by the parent output and started');
select results_eq(
  $$select t.task_index, (q.message->>'task_index')::int, q.message->>'step_slug'
    from pgflow.step_tasks t join pgmq.q_m q on q.msg_id = t.message_id
    where t.step_slug = 'each' order by t.task_index$$,
  $$values (0, 0, 'each'::text), (1, 1, 'each'), (2, 2, 'each')$$,
  'task i has a message for task_index i');
select is((select initial_tasks from pgflow.step_states where step_slug = 'again'), null::int,
          'the map after the map is still unsized');

select pgflow.start_tasks('m', array(select message_id from pgflow.step_tasks where step_slug = 'each'), (pgflow_tests.ensure_worker('m')).worker_id);
select pgflow.complete_task(:'run', 'each', i, to_jsonb(i)) from generate_series(0, 2) i;
select results_eq($$select status, initial_tasks from pgflow.step_states where step_slug = 'again'$$,
                  $$values ('started'::text, 3)$$, 'then it gets one task per parent task');
select is((select count(*) from pgflow.step_tasks where step_slug = 'again' and status = 'queued'), 3::bigint,
          'three queued tasks');

select * from finish();
rollback;
