-- A queue that already exists (created outside pgflow) is reused, not created again.
begin;
select plan(3);

select pgmq.create('preexisting');
select pgmq.send('preexisting', '{"old": true}');

select lives_ok($$select pgflow.create_flow('preexisting')$$, 'create_flow succeeds');
select is((select count(*) from pgmq.list_queues() where queue_name = 'preexisting'), 1::bigint,
          'one queue');
select is((pgflow_tests.queue_counts('preexisting')).active, 1::bigint, 'its messages are kept');

select * from finish();
rollback;
