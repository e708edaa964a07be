-- A persisted flow whose steps route to a queue that has disappeared is not silently given a
-- new queue: PGMQ would restart message ids, which existing task snapshots (queue_name,
-- message_id) still hold. Verification and add_step refuse; a stepless flow (no route, no
-- tasks) gets its queue provisioned again.
begin;
select plan(6);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.start_flow('f', '{}');
select pgmq.drop_queue('f');

select throws_ok($$select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())$$,
  '42704', 'PGMQ queue "f" of flow "f" is missing although its steps route to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or use another flow slug',
  'verifying the flow refuses');
select throws_ok($$select pgflow.add_step('f', 'b')$$, '42704', 'PGMQ queue "f" of flow "f" is missing although its steps route to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or use another flow slug', 'add_step refuses');
select is((select count(*) from pgmq.meta), 0::bigint, 'no queue was recreated');

-- Restored deliberately by an operator: the route owns it again.
select pgmq.create('f');
select is(pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol())->>'status',
          'verified', 'after a deliberate restore the flow verifies');

select pgflow.ensure_flow_compiled('empty', '{"steps": []}', pgflow.worker_protocol());
select pgmq.drop_queue('empty');
select is(pgflow.ensure_flow_compiled('empty', '{"steps": []}', pgflow.worker_protocol())->>'status', 'verified',
          'a stepless flow verifies');
select is((select count(*) from pgmq.meta where queue_name = 'empty'), 1::bigint, 'and gets its queue provisioned again');

select * from finish();
rollback;
