-- A flow whose queue was dropped by hand is not deleted since 0002 (0001 deleted it anyway):
-- pgflow refuses to act on an uncertain physical resource, and the failure changes nothing.
begin;
select plan(3);

select pgflow_tests.setup_flow('sequential');
select pgflow.start_flow('sequential', '{}');
select pgmq.drop_queue('sequential');
select throws_ok($$select pgflow.delete_flow_and_data('sequential')$$, '42704',
  'PGMQ queue "sequential" does not exist (no pgmq.meta row)', 'deletion fails without a queue');
select is((select count(*) from pgflow.flows), 1::bigint, 'the flow is kept');
select is((select count(*) from pgflow.steps) + (select count(*) from pgflow.runs)
          + (select count(*) from pgflow.step_tasks), 5::bigint, 'its steps, run and task are kept');

select * from finish();
rollback;
