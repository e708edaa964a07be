-- An 'Orders'-style name: meta keeps the spelling, physical objects are lower-case (except the
-- archive index), every function reaches the same tables whatever the spelling, and the queue
-- can be dropped and created again.
begin;
select plan(22);

select lives_ok($$select pgmq.create('Orders')$$, 'create Orders');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('Orders')$$,
                  'meta stores the exact spelling');
select has_table('pgmq', 'q_orders', 'queue table q_orders');
select has_table('pgmq', 'a_orders', 'archive table a_orders');
select hasnt_table('pgmq', 'q_Orders', 'no case-preserving queue table');
select has_sequence('pgmq', 'q_orders_msg_id_seq', 'sequence q_orders_msg_id_seq');
select set_eq(
  $$select tablename::text, indexname::text from pg_indexes where schemaname = 'pgmq' and tablename <> 'meta'$$,
  $$values ('q_orders', 'q_orders_pkey'), ('q_orders', 'q_orders_vt_idx'),
           ('a_orders', 'a_orders_pkey'), ('a_orders', 'archived_at_idx_Orders')$$,
  'indexes: lower-case, except archived_at_idx_Orders built from the raw name');

-- Every spelling reaches q_orders.
create temp table sent as
  select msg_id from pgmq.send('Orders', '{"n": 1}') as msg_id
  union all select * from pgmq.send('orders', '{"n": 2}')
  union all select * from pgmq.send('ORDERS', '{"n": 3}')
  union all select * from pgmq.send_batch('oRdErS', array['{"n": 4}', '{"n": 5}']::jsonb[]);
select is((select count(*) from pgmq.q_orders), 5::bigint, 'send/send_batch under four spellings fill one table');

create temp table got as select * from pgmq.read('orders', 30, 2);
select results_eq($$select msg_id from got order by 1$$, $$select msg_id from sent order by 1 limit 2$$,
                  'read through the lower-case spelling');
select ok(pgmq.archive('ORDERS', (select min(msg_id) from got)), 'archive through upper case');
select is((select count(*) from pgmq.a_orders), 1::bigint, 'the message is in a_orders');
select results_eq($$select * from pgmq.archive('Orders', array(select msg_id from got))$$,
                  $$select max(msg_id) from got$$, 'array archive through the stored spelling');
select ok(pgmq.delete('orders', (select max(msg_id) from sent)), 'delete through lower case');
select is((select queue_name from pgmq.metrics('ORDERS')), 'ORDERS', 'metrics echoes the name as passed');
select is((select queue_length from pgmq.metrics('ORDERS')), 2::bigint, 'and counts the shared table');
select is(pgmq.purge_queue('Orders'), 2::bigint, 'purge through the stored spelling');

select ok(pgmq.drop_queue('Orders'), 'drop Orders');
select ok(to_regclass('pgmq.q_orders') is null and to_regclass('pgmq.a_orders') is null
          and to_regclass('pgmq.q_orders_msg_id_seq') is null, 'tables and sequence are gone');
select is_empty($$select * from pgmq.meta$$, 'the meta row is gone');

select lives_ok($$select pgmq.create('Orders')$$, 'create Orders again');
select is((select count(*) from pgmq.q_orders), 0::bigint, 'the recreated queue is empty');
select is((select * from pgmq.send('orders', '{"again": true}')), 1::bigint,
          'and its ids start again at 1');

select * from finish();
rollback;
