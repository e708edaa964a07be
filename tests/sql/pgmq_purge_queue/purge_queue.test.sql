-- purge_queue(q): empties the queue table and returns how many messages it removed; the archive
-- and the msg_id sequence are left alone.
begin;
select plan(7);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select is(pgmq.purge_queue('jobs'), 0::bigint, 'purging an empty queue returns 0');

select pgmq.send_batch('jobs', array['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[]) \g /dev/null
select pgmq.send('jobs', '{"n": 5}', 3600) \g /dev/null
select pgmq.read('jobs', 3600, 1) \g /dev/null
select pgmq.archive('jobs', 2::bigint) \g /dev/null

select is(pgmq.purge_queue('jobs'), 4::bigint, 'returns the number of queued messages, visible or not');
select is((select count(*) from pgmq.q_jobs), 0::bigint, 'the queue is empty');
select is((select count(*) from pgmq.a_jobs), 1::bigint, 'the archive is untouched');
select is((select * from pgmq.send('jobs', '{"n": 6}')), 6::bigint, 'msg_ids continue: the sequence is not reset');
select throws_ok($$select pgmq.purge_queue('missing')$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'a missing queue fails');

select * from finish();
rollback;
