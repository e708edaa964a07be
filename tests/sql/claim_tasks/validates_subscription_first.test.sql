-- claim_tasks validates the worker's subscription before it judges any message, and raises
-- before anything changes: an unregistered worker, a worker registered for another queue, and
-- a queue that is not on the flow's route, and an unknown flow are refused even when the batch
-- holds a message that would be fatal, which therefore pauses nothing.
begin;
select plan(9);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.ensure_flow_compiled('g', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn_f', 'f', 'f', pgflow.worker_protocol());
select pgflow.register_worker('22222222-2222-2222-2222-222222222222', 'fn_g', 'g', 'g', pgflow.worker_protocol());
select pgflow.start_flow('f', '{}');
select pgflow.start_flow('g', '{}');
-- A pgflow-shaped message without a task in each queue (fatal if it were judged).
select s.id as orphan_f from pgmq.send('f', jsonb_build_object('flow_slug', 'f', 'run_id', gen_random_uuid(), 'step_slug', 'a', 'task_index', 0)) s(id) \gset
select s.id as orphan_g from pgmq.send('g', jsonb_build_object('flow_slug', 'g', 'run_id', gen_random_uuid(), 'step_slug', 'a', 'task_index', 0)) s(id) \gset
create temp table before as
  select (select jsonb_agg(to_jsonb(t) order by t.flow_slug) from pgflow.step_tasks t) as tasks,
         (select jsonb_agg(to_jsonb(q) order by q.msg_id) from pgmq.q_f q) as q_f,
         (select jsonb_agg(to_jsonb(q) order by q.msg_id) from pgmq.q_g q) as q_g;

select throws_ok(format($$select * from pgflow.claim_tasks('f', 'f', array[1, %s]::bigint[], '99999999-9999-9999-9999-999999999999')$$, :orphan_f),
  'P0002', 'Worker 99999999-9999-9999-9999-999999999999 is not registered (register_worker)',
  'an unregistered worker is refused');
select throws_ok(format($$select * from pgflow.claim_tasks('f', 'f', array[1, %s]::bigint[], '22222222-2222-2222-2222-222222222222')$$, :orphan_f),
  '22023', 'Worker 22222222-2222-2222-2222-222222222222 is registered for queue "g", not "f"',
  'a worker registered for another queue is refused');
select throws_ok(format($$select * from pgflow.claim_tasks('g', 'f', array[1, %s]::bigint[], '22222222-2222-2222-2222-222222222222')$$, :orphan_g),
  '22023', 'Queue "g" is not on the route of flow "f"',
  'a queue that is not on the flow''s route is refused');
select throws_ok(format($$select * from pgflow.claim_tasks('g', 'nope', array[1, %s]::bigint[], '22222222-2222-2222-2222-222222222222')$$, :orphan_g),
  'P0002', 'Flow "nope" does not exist',
  'an unknown flow is refused (e.g. deleted while the worker polled)');
select throws_ok($$select * from pgflow.claim_tasks('F', 'F', array[1]::bigint[], '11111111-1111-1111-1111-111111111111')$$,
  'P0002', 'Flow "F" does not exist',
  'the flow slug is exact (F is not f), though the queue name is case-insensitive');

select is((select jsonb_agg(to_jsonb(t) order by t.flow_slug) from pgflow.step_tasks t), (select tasks from before),
          'no task changed');
select is((select jsonb_agg(to_jsonb(q) order by q.msg_id) from pgmq.q_f q), (select q_f from before),
          'no message of f changed (visibility, read count)');
select is((select jsonb_agg(to_jsonb(q) order by q.msg_id) from pgmq.q_g q), (select q_g from before),
          'no message of g changed');
select is((select count(*) from pgflow.worker_functions where paused_at is not null), 0::bigint,
          'no worker function was paused');

select * from finish();
rollback;
