-- The character check runs in every function that maps a name, not only at creation.
begin;
select plan(17);

\set msg 'queue name contains invalid characters: $, ;, --, or \\'''
select throws_ok($$select pgmq.send('a;b', '{}')$$, 'P0001', :'msg', 'send');
select throws_ok($$select pgmq.send('a;b', '{}', 1)$$, 'P0001', :'msg', 'send with delay');
select throws_ok($$select pgmq.send('a;b', '{}', '{}'::jsonb, now())$$, 'P0001', :'msg', 'send with headers and time');
select throws_ok($$select pgmq.send_batch('a$b', array['{}']::jsonb[])$$, 'P0001', :'msg', 'send_batch');
select throws_ok($$select pgmq.read('a--b', 30, 1)$$, 'P0001', :'msg', 'read');
select throws_ok($$select pgmq.read_with_poll('a--b', 30, 1, 1, 10)$$, 'P0001', :'msg', 'read_with_poll');
select throws_ok($$select pgmq.pop('a''b')$$, 'P0001', :'msg', 'pop');
select throws_ok($$select pgmq.set_vt('a''b', 1, 0)$$, 'P0001', :'msg', 'set_vt');
select throws_ok($$select pgmq.archive('a$b', 1::bigint)$$, 'P0001', :'msg', 'archive');
select throws_ok($$select pgmq.archive('a$b', array[1]::bigint[])$$, 'P0001', :'msg', 'archive array');
select throws_ok($$select pgmq.delete('a$b', 1::bigint)$$, 'P0001', :'msg', 'delete');
select throws_ok($$select pgmq.delete('a$b', array[1]::bigint[])$$, 'P0001', :'msg', 'delete array');
select throws_ok($$select pgmq.purge_queue('a;b')$$, 'P0001', :'msg', 'purge_queue');
select throws_ok($$select pgmq.drop_queue('a;b')$$, 'P0001', :'msg', 'drop_queue');
select throws_ok($$select pgmq.metrics('a;b')$$, 'P0001', :'msg', 'metrics');
select throws_ok($$select pgmq.detach_archive('a;b')$$, 'P0001', :'msg', 'detach_archive');
select throws_ok($$select pgmq.create_non_partitioned('a;b')$$, 'P0001', :'msg', 'create_non_partitioned');

select * from finish();
rollback;
