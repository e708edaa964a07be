-- The six send_batch overloads: one row per message, ids in array order, one shared vt, and
-- headers paired with messages by position.
begin;
select plan(16);

select lives_ok($$select pgmq.create('batch')$$, 'create a queue');

select clock_timestamp() as t0 \gset
create temp table b1 as select * from pgmq.send_batch('batch', array['{"b": 1, "i": 1}', '{"b": 1, "i": 2}', '{"b": 1, "i": 3}']::jsonb[]) as msg_id;
create temp table b2 as select * from pgmq.send_batch('batch', array['{"b": 2, "i": 1}', '{"b": 2, "i": 2}']::jsonb[], 60) as msg_id;
create temp table b3 as select * from pgmq.send_batch('batch', array['{"b": 3, "i": 1}', '{"b": 3, "i": 2}']::jsonb[], '2030-01-01 00:00:00+00'::timestamptz) as msg_id;
create temp table b4 as select * from pgmq.send_batch('batch', array['{"b": 4, "i": 1}', '{"b": 4, "i": 2}']::jsonb[], array['{"h": 1}', '{"h": 2}']::jsonb[]) as msg_id;
create temp table b5 as select * from pgmq.send_batch('batch', array['{"b": 5, "i": 1}', '{"b": 5, "i": 2}']::jsonb[], array['{"h": 1}', '{"h": 2}']::jsonb[], 120) as msg_id;
create temp table b6 as select * from pgmq.send_batch('batch', array['{"b": 6, "i": 1}', '{"b": 6, "i": 2}']::jsonb[], array['{"h": 1}', '{"h": 2}']::jsonb[], '2031-01-01 00:00:00+00'::timestamptz) as msg_id;
select clock_timestamp() as t1 \gset

select results_eq($$select msg_id from b1$$, $$values (1::bigint), (2), (3)$$,
                  'send_batch returns one id per message, in array order');
select results_eq($$select q.message->>'i' from b1 join pgmq.q_batch q using (msg_id) order by msg_id$$,
                  $$values ('1'), ('2'), ('3')$$, 'ids follow the array order');
select is((select count(distinct q.vt) from b1 join pgmq.q_batch q using (msg_id)), 1::bigint,
          'all messages of a batch share one vt');
select ok((select bool_and(q.vt between :'t0' and :'t1' and q.headers is null and q.read_ct = 0
                           and q.enqueued_at = now())
           from b1 join pgmq.q_batch q using (msg_id)),
          'send_batch(q, msgs): visible now, no headers');

select ok((select count(distinct q.vt) = 1
                  and bool_and(q.vt between :'t0'::timestamptz + interval '60 s'
                                        and :'t1'::timestamptz + interval '60 s')
           from b2 join pgmq.q_batch q using (msg_id)),
          'send_batch(q, msgs, delay integer): one vt, delay seconds ahead');
select results_eq($$select distinct q.vt from b3 join pgmq.q_batch q using (msg_id)$$,
                  $$values ('2030-01-01 00:00:00+00'::timestamptz)$$,
                  'send_batch(q, msgs, delay timestamptz)');
select results_eq($$select q.message->>'i', q.headers from b4 join pgmq.q_batch q using (msg_id) order by msg_id$$,
                  $$values ('1', '{"h": 1}'::jsonb), ('2', '{"h": 2}')$$,
                  'send_batch(q, msgs, headers): headers pair with messages by position');
select ok((select bool_and(q.vt between :'t0' and :'t1') from b4 join pgmq.q_batch q using (msg_id)),
          'and are visible now');
select ok((select count(distinct q.vt) = 1 and count(q.headers) = 2
                  and bool_and(q.vt between :'t0'::timestamptz + interval '120 s'
                                        and :'t1'::timestamptz + interval '120 s')
           from b5 join pgmq.q_batch q using (msg_id)),
          'send_batch(q, msgs, headers, delay integer)');
select results_eq($$select q.message->>'i', q.headers, q.vt from b6 join pgmq.q_batch q using (msg_id) order by msg_id$$,
                  $$values ('1', '{"h": 1}'::jsonb, '2031-01-01 00:00:00+00'::timestamptz),
                           ('2', '{"h": 2}', '2031-01-01 00:00:00+00')$$,
                  'send_batch(q, msgs, headers, delay timestamptz)');

create temp table short_headers as
  select * from pgmq.send_batch('batch', array['{"m": 1}', '{"m": 2}']::jsonb[], array['{"h": 1}']::jsonb[]) as msg_id;
select results_eq(
  $$select q.message, q.headers from short_headers join pgmq.q_batch q using (msg_id) order by msg_id$$,
  $$values ('{"m": 1}'::jsonb, '{"h": 1}'::jsonb), ('{"m": 2}', null)$$,
  'fewer headers than messages: the rest get NULL headers');
create temp table long_headers as
  select * from pgmq.send_batch('batch', array['{"m": 1}']::jsonb[], array['{"h": 1}', '{"h": 2}']::jsonb[]) as msg_id;
select results_eq(
  $$select q.message, q.headers from long_headers join pgmq.q_batch q using (msg_id) order by msg_id$$,
  $$values ('{"m": 1}'::jsonb, '{"h": 1}'::jsonb), (null, '{"h": 2}')$$,
  'more headers than messages: extra rows with a NULL message, as in 1.5.1');
select is_empty($$select * from pgmq.send_batch('batch', array[]::jsonb[])$$, 'an empty batch sends nothing');
select is((select count(*) from pgmq.send_batch(queue_name => 'batch', msgs => array['{}']::jsonb[],
                                                headers => array['{}']::jsonb[], delay => 0)), 1::bigint,
          'named arguments use the documented parameter names');
select throws_ok($$select pgmq.send_batch('missing', array['{}']::jsonb[])$$, '42P01', 'relation "pgmq.q_missing" does not exist',
                 'a queue that does not exist fails');

select * from finish();
rollback;
