-- A queue that already exists (created outside pgflow) under the flow's generated name is a
-- collision since 0002: create_flow refuses instead of adopting it, and leaves it untouched.
-- (0001 silently reused it.)
begin;
select plan(4);

select pgmq.create('preexisting');
select pgmq.send('preexisting', '{"old": true}');

select throws_ok($$select pgflow.create_flow('preexisting')$$, '42710',
  'PGMQ queue "preexisting" already exists; pgflow never adopts an existing queue for a new flow "preexisting". Drop or rename that queue, or use another flow slug',
  'create_flow refuses the existing queue');
select is((select count(*) from pgflow.flows), 0::bigint, 'no flow was created');
select is((select count(*) from pgmq.list_queues() where queue_name = 'preexisting'), 1::bigint,
          'the queue is still there, once');
select is((pgflow_tests.queue_counts('preexisting')).active, 1::bigint, 'its messages are kept');

select * from finish();
rollback;
