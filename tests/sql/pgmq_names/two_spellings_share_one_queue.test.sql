-- The documented 1.5.1 traps of case folding, reproduced as is: a differently-cased create adds
-- a second meta row and archive index on the same tables; dropping one spelling orphans the other
-- meta row and then breaks metrics_all.
begin;
select plan(9);

select lives_ok($$select pgmq.create('MyQueue')$$, 'create MyQueue');
select lives_ok($$select pgmq.create('myqueue')$$, 'create myqueue after MyQueue silently succeeds');
select set_eq($$select queue_name::text from pgmq.list_queues()$$, array['MyQueue', 'myqueue'],
              'two meta rows (the unique constraint is case-sensitive)');
select set_eq(
  $$select indexname::text from pg_indexes where schemaname = 'pgmq' and tablename = 'a_myqueue'$$,
  array['a_myqueue_pkey', 'archived_at_idx_MyQueue', 'archived_at_idx_myqueue'],
  'a second archive index on the same archive table');
select is((select count(*) from pgmq.metrics_all()), 2::bigint, 'metrics_all reports the queue twice');

select ok(pgmq.drop_queue('myqueue'), 'drop myqueue');
select hasnt_table('pgmq', 'q_myqueue', 'the shared tables are gone');
select results_eq($$select queue_name::text from pgmq.meta$$, $$values ('MyQueue')$$,
                  'only the exact meta row was deleted: MyQueue is an orphan');
select throws_ok($$select * from pgmq.metrics_all()$$, '42P01', 'relation "pgmq.q_myqueue" does not exist',
                 'metrics_all now fails until the orphan is removed');

select * from finish();
rollback;
