-- set_vt(q, id, vt): vt = now + vt seconds for that message whatever its state; returns the
-- updated row, or nothing for an unknown id.
begin;
select plan(10);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send('jobs', '{"n": 1}', '{"h": 1}'::jsonb) as id \gset
select pgmq.read('jobs', 30, 1) \g /dev/null

select clock_timestamp() as t0 \gset
create temp table extended as select * from pgmq.set_vt('jobs', :id, 600);
select clock_timestamp() as t1 \gset
select results_eq($$select msg_id, read_ct, message, headers from extended$$,
                  format($$values (%s::bigint, 1, '{"n": 1}'::jsonb, '{"h": 1}'::jsonb)$$, :id),
                  'returns the updated message_record; read_ct unchanged');
select ok((select vt between :'t0'::timestamptz + interval '600 s' and :'t1'::timestamptz + interval '600 s' from extended),
          'vt is clock time + vt seconds (a lease extension)');
select is((select vt from pgmq.q_jobs where msg_id = :id), (select vt from extended), 'and stored');
select is_empty($$select * from pgmq.read('jobs', 30, 1)$$, 'the message stays invisible');

select ok((select vt > now() and vt <= clock_timestamp() from pgmq.set_vt('jobs', :id, 0)),
          'set_vt 0 uses clock_timestamp(), not the transaction start');
select results_eq($$select msg_id, read_ct from pgmq.read('jobs', 30, 1)$$, format('values (%s::bigint, 2)', :id),
                  'released: the next read gets it');
select results_eq($$select msg_id from pgmq.set_vt(queue_name => 'jobs', msg_id => $$ || :id || $$, vt => -60)$$,
                  format('values (%s::bigint)', :id), 'negative offsets are allowed (named arguments work)');

select is_empty($$select * from pgmq.set_vt('jobs', 999, 10)$$, 'an unknown id returns nothing');
select throws_ok($$select * from pgmq.set_vt('missing', 1, 10)$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'a missing queue fails');

select * from finish();
rollback;
