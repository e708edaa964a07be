-- metrics_all(): metrics for every queue in meta.
begin;
select plan(3);

select is_empty($$select * from pgmq.metrics_all()$$, 'no queues, no rows');

select pgmq.create('a') \g /dev/null
select pgmq.create('b') \g /dev/null
select pgmq.send('b', '{}') \g /dev/null

select set_eq($$select queue_name, queue_length, total_messages from pgmq.metrics_all()$$,
              $$values ('a'::text, 0::bigint, 0::bigint), ('b', 1, 1)$$, 'one row per queue');
select set_eq($$select queue_name, queue_length, queue_visible_length from pgmq.metrics_all()$$,
              $$select m.queue_name, m.queue_length, m.queue_visible_length
                from pgmq.meta, pgmq.metrics(meta.queue_name) m$$,
              'the same as metrics() for each meta row');

select * from finish();
rollback;
