-- archive(q, id): moves the message into a_<q> in one statement and says whether it did.
begin;
select plan(9);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send('jobs', '{"n": 1}', '{"h": 1}'::jsonb) as id \gset
select pgmq.send('jobs', '{"n": 2}', 3600) as delayed \gset
select pgmq.read('jobs', 30, 1) \g /dev/null
create temp table before as select * from pgmq.q_jobs where msg_id = :id;

select is(pgmq.archive('jobs', :id::bigint), true, 'archiving a queued message returns true');
select is((select count(*) from pgmq.q_jobs where msg_id = :id), 0::bigint, 'it left the queue');
select results_eq(
  $$select msg_id, read_ct, enqueued_at, vt, message, headers from pgmq.a_jobs$$,
  $$select msg_id, read_ct, enqueued_at, vt, message, headers from before$$,
  'msg_id, read_ct, enqueued_at, vt, message and headers are copied');
select is((select archived_at from pgmq.a_jobs), now(), 'archived_at is the transaction time');

select is(pgmq.archive('jobs', :id::bigint), false, 'archiving it again returns false');
select is(pgmq.archive('jobs', 999::bigint), false, 'an id that never existed returns false');
select is(pgmq.archive(queue_name => 'jobs', msg_id => :delayed::bigint), true,
          'vt is not checked: an invisible message can be archived (named arguments work)');
select throws_ok($$select pgmq.archive('missing', 1::bigint)$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'a missing queue fails');

select * from finish();
rollback;
