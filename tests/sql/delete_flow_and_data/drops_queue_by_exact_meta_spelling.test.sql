-- delete_flow_and_data drops exactly the flow's queue, addressing it by its exact pgmq.meta
-- spelling: a queue upgraded from 0.16.0 whose meta row is spelled "myFlow" loses both tables
-- and that meta row (dropping "myflow" would leave the "myFlow" row behind). Other queues stay.
begin;
select plan(6);

select pgflow.ensure_flow_compiled('myFlow', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.ensure_flow_compiled('other', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.start_flow('myFlow', '{}');
select pgflow.start_flow('other', '{}');
update pgmq.meta set queue_name = 'myFlow' where queue_name = 'myflow';  -- as 0.16.0 created it

select lives_ok($$select pgflow.delete_flow_and_data('myFlow')$$, 'the flow is deleted');
select is((select count(*) from pgmq.meta where lower(queue_name) = 'myflow'), 0::bigint,
          'its mixed-case pgmq.meta row is gone');
select ok(to_regclass('pgmq.q_myflow') is null and to_regclass('pgmq.a_myflow') is null, 'both its tables are dropped');
select is((select count(*) from pgflow.flows where flow_slug = 'myFlow'), 0::bigint, 'the flow row is gone');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('other'::text)$$, 'the other flow''s queue remains');
select is((pgflow_tests.queue_counts('other')).active, 1::bigint, 'with its message');

select * from finish();
rollback;
