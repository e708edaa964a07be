-- has_visible_work answers whether a read of the worker's queue would return a message now:
-- not for an empty queue, a message read (hidden until its vt), a delayed message or a held
-- task's message (vt = infinity); yes once one is visible. It reads and changes nothing.
begin;
select plan(9);

select pgflow.ensure_flow_compiled('f', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn_f', 'f', 'f', pgflow.worker_protocol());

select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false, 'an empty queue: no');

select pgflow.start_flow('f', '{}');
create temp table before as select jsonb_agg(to_jsonb(q) order by q.msg_id) as q from pgmq.q_f q;
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), true, 'a queued task''s message: yes');
select is((select jsonb_agg(to_jsonb(q) order by q.msg_id) from pgmq.q_f q), (select q from before),
          'looking reads nothing (read count and vt unchanged)');

select count(*) from pgmq.read('f', 30, 10);
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false, 'a message read, hidden until its vt: no');
select pgmq.set_vt('f', (select max(msg_id) from pgmq.q_f), 0);
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), true, 'visible again at its vt: yes');
update pgmq.q_f set vt = 'infinity';
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false, 'a held task''s message (vt infinity): no');
select pgmq.send('f', '{}', 60);
select is(pgflow.has_visible_work('11111111-1111-1111-1111-111111111111'), false, 'a message delayed by a minute: no');

-- Case: queue names are lower case, whatever the flow slug's case.
select pgflow.ensure_flow_compiled('Mixed_Case', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))), pgflow.worker_protocol());
select pgflow.register_worker('33333333-3333-3333-3333-333333333333', 'fn_m', 'Mixed_Case', 'mixed_case', pgflow.worker_protocol());
select is(pgflow.has_visible_work('33333333-3333-3333-3333-333333333333'), false, 'a mixed-case flow''s empty queue: no');
select pgflow.start_flow('Mixed_Case', '{}');
select is(pgflow.has_visible_work('33333333-3333-3333-3333-333333333333'), true, 'and its queued task: yes');

select * from finish();
rollback;
