-- A root map over 2000 elements: 2000 tasks, 2000 messages, indexes paired correctly.
begin;
select plan(3);

select pgflow.create_flow('big');
select pgflow.add_step('big', 'each', step_type => 'map');
select pgflow.start_flow('big', (select jsonb_agg(g) from generate_series(1, 2000) g));

select is((select initial_tasks from pgflow.step_states), 2000, 'initial_tasks = 2000');
select is((select count(*) from pgflow.step_tasks), 2000::bigint, '2000 tasks');
select is((select count(*) from pgflow.step_tasks t join pgmq.q_big q on q.msg_id = t.message_id
           where (q.message->>'task_index')::int = t.task_index), 2000::bigint,
          'every task''s message carries its own index');

select * from finish();
rollback;
