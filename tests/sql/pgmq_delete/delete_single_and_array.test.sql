-- delete(q, id) / delete(q, ids[]): remove messages for good, reporting only what was deleted.
begin;
select plan(11);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send_batch('jobs', array['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}', '{"n": 5}']::jsonb[]) \g /dev/null
select pgmq.read('jobs', 3600, 1) \g /dev/null

select is(pgmq.delete('jobs', 1::bigint), true, 'deleting a queued (even invisible) message returns true');
select is((select count(*) from pgmq.q_jobs where msg_id = 1), 0::bigint, 'it is gone');
select is((select count(*) from pgmq.a_jobs), 0::bigint, 'and not archived');
select is(pgmq.delete('jobs', 1::bigint), false, 'deleting it again returns false');
select is(pgmq.delete(queue_name => 'jobs', msg_id => 999::bigint), false, 'an unknown id returns false');

select set_eq($$select * from pgmq.delete('jobs', array[2, 3, 1, 99]::bigint[])$$, array[2, 3]::bigint[],
              'the array form returns only the ids it deleted');
select set_eq($$select msg_id from pgmq.q_jobs$$, array[4, 5]::bigint[], 'the others remain');
select is_empty($$select * from pgmq.delete(queue_name => 'jobs', msg_ids => array[]::bigint[])$$,
                'an empty array deletes nothing');
select throws_ok($$select pgmq.delete('jobs', 1, 2)$$, '42883', 'function pgmq.delete(unknown, integer, integer) does not exist', 'there is no three-argument delete');
select throws_ok($$select pgmq.delete('missing', 1::bigint)$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'a missing queue fails');

select * from finish();
rollback;
