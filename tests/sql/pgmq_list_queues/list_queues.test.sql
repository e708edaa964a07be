-- list_queues(): every meta row as pgmq.queue_record.
begin;
select plan(4);

select is_empty($$select * from pgmq.list_queues()$$, 'no queues yet');

select pgmq.create('alpha') \g /dev/null
select pgmq.create_unlogged('Beta') \g /dev/null

select set_eq($$select queue_name::text, is_partitioned, is_unlogged, created_at = now() from pgmq.list_queues()$$,
              $$values ('alpha', false, false, true), ('Beta', false, true, true)$$,
              'one row per queue with the stored spelling and flags');
select set_eq($$select (q).* from (select q from pgmq.list_queues() q) s$$,
              $$select * from pgmq.meta$$, 'exactly the rows of pgmq.meta');

select pgmq.drop_queue('alpha') \g /dev/null
select results_eq($$select queue_name::text from pgmq.list_queues()$$, $$values ('Beta')$$,
                  'dropped queues disappear');

select * from finish();
rollback;
