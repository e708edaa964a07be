-- delete_flow_and_data removes the flow's tasks, step states, runs, deps, steps, flow row and queue.
begin;
select plan(8);

select pgflow_tests.setup_flow('sequential');
select pgflow.start_flow('sequential', '{"n": 1}');
select pgflow.start_flow('sequential', '{"n": 2}');
select pgflow_tests.poll_and_complete('sequential');

select lives_ok($$select pgflow.delete_flow_and_data('sequential')$$, 'deletes the flow');
select is((select count(*) from pgflow.step_tasks where flow_slug = 'sequential'), 0::bigint, 'no tasks left');
select is((select count(*) from pgflow.step_states where flow_slug = 'sequential'), 0::bigint, 'no step states left');
select is((select count(*) from pgflow.runs where flow_slug = 'sequential'), 0::bigint, 'no runs left');
select is((select count(*) from pgflow.deps where flow_slug = 'sequential'), 0::bigint, 'no deps left');
select is((select count(*) from pgflow.steps where flow_slug = 'sequential'), 0::bigint, 'no steps left');
select is((select count(*) from pgflow.flows where flow_slug = 'sequential'), 0::bigint, 'no flow row left');
select ok(not exists (select 1 from pgmq.list_queues() where queue_name = 'sequential')
          and to_regclass('pgmq.q_sequential') is null and to_regclass('pgmq.a_sequential') is null,
          'the queue and its archive are dropped');

select * from finish();
rollback;
