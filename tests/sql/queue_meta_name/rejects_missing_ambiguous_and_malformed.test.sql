-- pgflow._queue_meta_name requires exactly one case-insensitive pgmq.meta match and both of
-- its tables: zero matches, several matches (aliases of the same tables) and a missing message
-- or archive table each raise.
begin;
select plan(5);

select throws_ok($$select pgflow._queue_meta_name('nothing')$$, '42704',
  'PGMQ queue "nothing" does not exist (no pgmq.meta row)', 'zero matches');

select pgmq.create('orders');
select pgmq.create('Orders');
select throws_ok($$select pgflow._queue_meta_name('orders')$$, '21000',
  'PGMQ queue "orders" is ambiguous: pgmq.meta has 2 rows for the same tables (Orders, orders); keep one',
  'two matches (Orders and orders)');

select pgmq.create('noq');
select pgflow_tests.drop_queue_table('pgmq.q_noq');
select throws_ok($$select pgflow._queue_meta_name('noq')$$, '42P01',
  'PGMQ queue "noq" is malformed: table pgmq.q_noq or pgmq.a_noq is missing', 'the message table is missing');
select pgmq.create('NoA');
select pgflow_tests.drop_queue_table('pgmq.a_noa');
select throws_ok($$select pgflow._queue_meta_name('noa')$$, '42P01',
  'PGMQ queue "NoA" is malformed: table pgmq.q_noa or pgmq.a_noa is missing', 'the archive table is missing');

select pgmq.create('ghost');
delete from pgmq.meta where queue_name = 'ghost';
select throws_ok($$select pgflow._queue_meta_name('ghost')$$, '42704', 'PGMQ queue "ghost" does not exist (no pgmq.meta row)', 'tables without a meta row: no match');

select * from finish();
rollback;
