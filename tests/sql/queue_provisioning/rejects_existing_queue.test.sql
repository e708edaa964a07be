-- For a flow that does not exist yet, an existing queue with its generated name is a
-- collision: create_flow and the compiler refuse instead of adopting it (any pgmq.meta
-- spelling, or bare tables without a meta row), nothing is created, the queue is untouched.
begin;
select plan(10);

select pgmq.create('taken');
select pgmq.send('taken', '{"theirs": true}');

select throws_ok($$select pgflow.create_flow('taken')$$, '42710', 'PGMQ queue "taken" already exists; pgflow never adopts an existing queue for a new flow "taken". Drop or rename that queue, or use another flow slug', 'create_flow refuses an existing queue');
select throws_ok($$select pgflow.ensure_flow_compiled('taken', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                                       pgflow.worker_protocol())$$,
  '42710', 'PGMQ queue "taken" already exists; pgflow never adopts an existing queue for a new flow "taken". Drop or rename that queue, or use another flow slug',
  'the compiler refuses it');
select is((select count(*) from pgflow.flows) + (select count(*) from pgflow.steps), 0::bigint, 'no flow or step was created');
select is((pgflow_tests.queue_counts('taken')).active, 1::bigint, 'the queue and its message are untouched');

-- A mixed-case queue owns the same tables as its lowercase name.
select pgmq.create('MixedCase');
select throws_ok($$select pgflow.ensure_flow_compiled('mixedCase', '{"steps": []}', pgflow.worker_protocol())$$,
  '42710', 'PGMQ queue "MixedCase" already exists; pgflow never adopts an existing queue for a new flow "mixedCase". Drop or rename that queue, or use another flow slug',
  'a queue spelled MixedCase collides with flow mixedCase');
select is((select count(*) from pgflow.flows), 0::bigint, '(not created)');

-- Tables without a pgmq.meta row.
select pgmq.create('bare');
delete from pgmq.meta where queue_name = 'bare';
select throws_ok($$select pgflow.ensure_flow_compiled('bare', jsonb_build_object('steps', jsonb_build_array(pgflow_tests.step_shape('a'))),
                                                       pgflow.worker_protocol())$$,
  '42710', 'PGMQ tables pgmq.q_bare / pgmq.a_bare exist without a pgmq.meta row; refusing to reuse them',
  'the compiler refuses bare tables with the generated name');
select is((select count(*) from pgflow.flows), 0::bigint, 'the compilation left nothing behind');
select pgflow.create_flow('bare');
select throws_ok($$select pgflow.add_step('bare', 'a')$$, '42710', 'PGMQ tables pgmq.q_bare / pgmq.a_bare exist without a pgmq.meta row; refusing to reuse them', 'add_step refuses them too');
select is((select count(*) from pgmq.meta where lower(queue_name) = 'bare'), 0::bigint, 'no meta row was added for them');

select * from finish();
rollback;
