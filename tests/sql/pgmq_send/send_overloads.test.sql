-- The six send overloads: what they store, which vt they set, what they return.
begin;
select plan(16);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');

select clock_timestamp() as t0 \gset
select pgmq.send('jobs', '{"o": 1}') as id1 \gset
select pgmq.send('jobs', '{"o": 2}', 60) as id2 \gset
select pgmq.send('jobs', '{"o": 3}', '2030-01-01 00:00:00+00'::timestamptz) as id3 \gset
select pgmq.send('jobs', '{"o": 4}', '{"h": 4}'::jsonb) as id4 \gset
select pgmq.send('jobs', '{"o": 5}', '{"h": 5}'::jsonb, 120) as id5 \gset
select pgmq.send('jobs', '{"o": 6}', '{"h": 6}'::jsonb, '2031-01-01 00:00:00+00'::timestamptz) as id6 \gset
select clock_timestamp() as t1 \gset

select results_eq(
  format('values (%s::bigint), (%s), (%s), (%s), (%s), (%s)', :id1, :id2, :id3, :id4, :id5, :id6),
  $$values (1::bigint), (2), (3), (4), (5), (6)$$,
  'each send returns the new msg_id, in sending order');
select results_eq(
  $$select msg_id, read_ct, message, headers, enqueued_at = now() from pgmq.q_jobs order by msg_id$$,
  $$values (1::bigint, 0, '{"o": 1}'::jsonb, null::jsonb, true),
           (2, 0, '{"o": 2}', null, true),
           (3, 0, '{"o": 3}', null, true),
           (4, 0, '{"o": 4}', '{"h": 4}', true),
           (5, 0, '{"o": 5}', '{"h": 5}', true),
           (6, 0, '{"o": 6}', '{"h": 6}', true)$$,
  'messages and headers are stored, read_ct starts at 0, enqueued_at is the transaction time');

select ok((select vt from pgmq.q_jobs where msg_id = :id1) between :'t0' and :'t1',
          'send(q, msg): vt is the send instant');
select ok((select vt > now() from pgmq.q_jobs where msg_id = :id1),
          'vt comes from clock_timestamp(), not the transaction start');
select ok((select vt from pgmq.q_jobs where msg_id = :id2)
            between :'t0'::timestamptz + interval '60 s' and :'t1'::timestamptz + interval '60 s',
          'send(q, msg, delay integer): vt is delay seconds after the send');
select is((select vt from pgmq.q_jobs where msg_id = :id3), '2030-01-01 00:00:00+00'::timestamptz,
          'send(q, msg, delay timestamptz): vt is that instant');
select ok((select vt from pgmq.q_jobs where msg_id = :id4) between :'t0' and :'t1',
          'send(q, msg, headers): visible immediately');
select ok((select vt from pgmq.q_jobs where msg_id = :id5)
            between :'t0'::timestamptz + interval '120 s' and :'t1'::timestamptz + interval '120 s',
          'send(q, msg, headers, delay integer)');
select is((select vt from pgmq.q_jobs where msg_id = :id6), '2031-01-01 00:00:00+00'::timestamptz,
          'send(q, msg, headers, delay timestamptz)');

select results_eq($$select msg_id, message, headers from pgmq.read('jobs', 30, 10) order by msg_id$$,
                  $$values (1::bigint, '{"o": 1}'::jsonb, null::jsonb), (4, '{"o": 4}', '{"h": 4}')$$,
                  'only the undelayed messages are visible');

select is((select * from pgmq.send(queue_name => 'jobs', msg => '{"named": true}',
                                   headers => '{"h": 7}', delay => 0)), 7::bigint,
          'named arguments use the documented parameter names');
select is((select * from pgmq.send('jobs', null)), 8::bigint, 'a NULL message is accepted');
select is((select message from pgmq.q_jobs where msg_id = 8), null, 'and stored as NULL');

select throws_ok($$select pgmq.send('jobs', '{}', '{}')$$, '42725', 'function pgmq.send(unknown, unknown, unknown) is not unique',
                 'untyped third argument is ambiguous between headers and delay, as in 1.5.1');
select throws_ok($$select pgmq.send('missing', '{}')$$, '42P01', 'relation "pgmq.q_missing" does not exist',
                 'sending to a queue that does not exist fails');

select * from finish();
rollback;
