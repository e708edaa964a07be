-- has_visible_work names what is wrong: a worker that is not registered, and a worker whose
-- queue no longer exists (its flow deleted while the worker polled).
begin;
select plan(2);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn_f', 'f', 'f', pgflow.worker_protocol());

select throws_ok($$select pgflow.has_visible_work('99999999-9999-9999-9999-999999999999')$$,
  'P0002', 'Worker 99999999-9999-9999-9999-999999999999 is not registered (register_worker)',
  'an unregistered worker is refused');
select pgmq.drop_queue('f');
select throws_ok($$select pgflow.has_visible_work('11111111-1111-1111-1111-111111111111')$$,
  '42P01', 'Queue "f" of worker 11111111-1111-1111-1111-111111111111 does not exist',
  'a worker whose queue is gone is told so');

select * from finish();
rollback;
