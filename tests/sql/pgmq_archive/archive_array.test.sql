-- archive(q, ids[]): returns only the ids actually moved.
begin;
select plan(7);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send_batch('jobs', array['{"n": 1}', '{"n": 2}', '{"n": 3}', '{"n": 4}']::jsonb[]) \g /dev/null

select set_eq($$select * from pgmq.archive('jobs', array[1, 3, 99]::bigint[])$$, array[1, 3]::bigint[],
              'returns the ids that were in the queue, not the missing one');
select set_eq($$select msg_id from pgmq.a_jobs$$, array[1, 3]::bigint[], 'those are in the archive');
select set_eq($$select msg_id from pgmq.q_jobs$$, array[2, 4]::bigint[], 'the rest is still queued');
select is_empty($$select * from pgmq.archive('jobs', array[1, 3]::bigint[])$$, 'already archived ids return nothing');
select is_empty($$select * from pgmq.archive('jobs', array[]::bigint[])$$, 'an empty array returns nothing');
select set_eq($$select * from pgmq.archive(queue_name => 'jobs', msg_ids => array[2, 2, 4]::bigint[])$$,
              array[2, 4]::bigint[], 'a repeated id is moved and returned once');

select * from finish();
rollback;
