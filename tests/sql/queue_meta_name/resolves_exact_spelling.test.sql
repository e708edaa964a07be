-- pgflow._queue_meta_name resolves the exact pgmq.meta spelling of a queue from any case of
-- its name (pgflow stores no copy of it), for metadata-sensitive calls such as drop_queue.
begin;
select plan(4);

select pgmq.create('myQueue');
select pgmq.create('plain');

select is(pgflow._queue_meta_name('myqueue'), 'myQueue', 'the canonical name resolves to the mixed-case meta row');
select is(pgflow._queue_meta_name('MYQUEUE'), 'myQueue', 'any spelling resolves to it');
select is(pgflow._queue_meta_name('plain'), 'plain', 'a lowercase queue resolves to itself');
select is(pgflow._queue_meta_name('Plain'), 'plain', '(from any spelling)');

select * from finish();
rollback;
