-- read(q, vt, qty, conditional): up to qty visible messages, lowest msg_id first, as full
-- message_record rows taken after the update.
begin;
select plan(12);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select is_empty($$select * from pgmq.read('jobs', 30, 5)$$, 'an empty queue reads nothing');

select pgmq.send('jobs', '{"late": true}', 3600) as late \gset
select pgmq.send_batch('jobs', array['{"kind": "a", "n": 1}', '{"kind": "b", "n": 2}', '{"kind": "a", "n": 3}',
                                     '{"kind": "b", "n": 4}', '{"kind": "a", "n": 5}']::jsonb[],
                       array['{"h": 1}']::jsonb[]) \g /dev/null

select clock_timestamp() as t0 \gset
create temp table first_read as select * from pgmq.read('jobs', 30, 2);
select clock_timestamp() as t1 \gset

select results_eq($$select msg_id, read_ct, message, headers, enqueued_at = now() from first_read order by msg_id$$,
                  $$values (2::bigint, 1, '{"kind": "a", "n": 1}'::jsonb, '{"h": 1}'::jsonb, true),
                           (3, 1, '{"kind": "b", "n": 2}', null, true)$$,
                  'qty 2 returns the two lowest visible ids, skipping the delayed one, with read_ct already 1');
select ok((select bool_and(vt between :'t0'::timestamptz + interval '30 s' and :'t1'::timestamptz + interval '30 s')
           from first_read),
          'the returned vt is the new deadline: now + vt seconds');
select results_eq($$select msg_id, vt from first_read order by msg_id$$,
                  $$select msg_id, vt from pgmq.q_jobs where msg_id in (2, 3) order by msg_id$$,
                  'the returned rows are what the table now holds');

select results_eq($$select msg_id from pgmq.read('jobs', 30, 10, '{"kind": "a"}') order by msg_id$$,
                  $$values (4::bigint), (6)$$, 'a conditional read returns only messages containing it');
select results_eq($$select msg_id from pgmq.read(queue_name => 'jobs', vt => 30, qty => 10, conditional => '{}') order by msg_id$$,
                  $$values (5::bigint)$$, 'conditional {} means no filter (named arguments work)');
select is_empty($$select * from pgmq.read('jobs', 30, 10)$$, 'everything visible has been read');

update pgmq.q_jobs set vt = clock_timestamp() - interval '1 s' where msg_id <> :late;
select is_empty($$select * from pgmq.read('jobs', 30, 0)$$, 'qty 0 reads nothing');
select results_eq($$select msg_id from pgmq.read('jobs', 30, 3)$$, $$values (2::bigint), (3), (4)$$,
                  'order is by msg_id');
select is((select read_ct from pgmq.q_jobs where msg_id = 2), 2, 'read_ct counts every read');

select throws_ok($$select * from pgmq.read('missing', 30, 1)$$, '42P01', 'relation "pgmq.q_missing" does not exist',
                 'reading a queue that does not exist fails');

select * from finish();
rollback;
