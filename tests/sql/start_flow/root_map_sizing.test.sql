-- A root map has initial_tasks = input array length and one task + message per element; a
-- dependent map waits with initial_tasks NULL.
begin;
select plan(5);

select pgflow.create_flow('m');
select pgflow.add_step('m', 'root_map', step_type => 'map');
select pgflow.add_step('m', 'dep_map', array['root_map'], step_type => 'map');
select pgflow.add_step('m', 'single', array['root_map']);
select run_id as run from pgflow.start_flow('m', '[10, "b", null, {"k": 1}]') \gset

select results_eq(
  $$select step_slug, status, initial_tasks, remaining_tasks from pgflow.step_states order by step_slug$$,
  $$values ('dep_map'::text, 'created'::text, null::int, null::int), ('root_map', 'started', 4, 4),
           ('single', 'created', 1, null)$$,
  'root map sized by the input, dependent map unknown, single 1');
select results_eq(
  $$select task_index from pgflow.step_tasks where step_slug = 'root_map' order by task_index$$,
  $$values (0), (1), (2), (3)$$, 'one task per element, indexed from 0');
select results_eq(
  $$select (q.message->>'task_index')::int from pgmq.q_m q order by q.msg_id$$,
  $$values (0), (1), (2), (3)$$, 'one message per task, in index order');
select ok((select bool_and(t.message_id = q.msg_id) from pgflow.step_tasks t
           join pgmq.q_m q on (q.message->>'task_index')::int = t.task_index),
          'each task records the message carrying its index');
select is((select count(*) from pgflow.step_tasks where step_slug <> 'root_map'), 0::bigint,
          'dependents have no tasks yet');

select * from finish();
rollback;
