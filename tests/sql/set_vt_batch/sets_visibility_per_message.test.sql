-- set_vt_batch sets each message's vt to now + its own offset and returns the updated rows
-- (headers included).
begin;
select plan(4);

select pgmq.create('q');
select pgmq.send('q', '{"n": 1}', '{"h": 1}'::jsonb);
select pgmq.send('q', '{"n": 2}');
select pgmq.send('q', '{"n": 3}');

select clock_timestamp() as t0 \gset
select results_eq(
  $$select msg_id, read_ct, message, headers from pgflow.set_vt_batch('q', array[1, 2]::bigint[], array[30, 120]) order by msg_id$$,
  $$values (1::bigint, 0, '{"n": 1}'::jsonb, '{"h": 1}'::jsonb), (2, 0, '{"n": 2}', null)$$,
  'returns the updated rows with message and headers');
select clock_timestamp() as t1 \gset
select results_eq(
  format($$select msg_id, vt between %L::timestamptz + off * interval '1 second' and %L::timestamptz + off * interval '1 second'
    from pgmq.q_q join (values (1::bigint, 30), (2, 120)) v(id, off) on v.id = msg_id order by msg_id$$, :'t0', :'t1'),
  $$values (1::bigint, true), (2, true)$$,
  'each message is hidden for its own offset');
select ok((select vt <= clock_timestamp() from pgmq.q_q where msg_id = 3), 'other messages are untouched');
select results_eq($$select msg_id from pgmq.read('q', 10, 10)$$, $$values (3::bigint)$$,
                  'only the untouched message is readable');

select * from finish();
rollback;
