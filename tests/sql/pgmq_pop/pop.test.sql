-- pop(q): deletes and returns the oldest visible message; read_ct unchanged, nothing archived.
begin;
select plan(8);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select is_empty($$select * from pgmq.pop('jobs')$$, 'an empty queue pops nothing');

select pgmq.send('jobs', '{"n": 0}', 3600) as delayed \gset
select pgmq.send('jobs', '{"n": 1}', '{"h": 1}'::jsonb) as first \gset
select pgmq.send('jobs', '{"n": 2}') as second \gset
select pgmq.read('jobs', 0, 1) \g /dev/null

select results_eq($$select msg_id, read_ct, message, headers, enqueued_at = now() from pgmq.pop('jobs')$$,
                  format($$values (%s::bigint, 1, '{"n": 1}'::jsonb, '{"h": 1}'::jsonb, true)$$, :first),
                  'pop returns the lowest visible id (skipping the delayed one) as a message_record; read_ct is not incremented');
select is((select count(*) from pgmq.q_jobs where msg_id = :first), 0::bigint, 'the message is deleted from the queue');
select is((select count(*) from pgmq.a_jobs), 0::bigint, 'and not archived');
select results_eq($$select msg_id, read_ct from pgmq.pop('jobs')$$, format('values (%s::bigint, 0)', :second),
                  'one message per call');
select is_empty($$select * from pgmq.pop('jobs')$$, 'only the delayed message is left, and it is invisible');
select throws_ok($$select * from pgmq.pop('missing')$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'popping a missing queue fails');

select * from finish();
rollback;
