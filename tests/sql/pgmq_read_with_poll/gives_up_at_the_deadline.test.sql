-- An empty poll returns nothing once max_poll_seconds have passed. The deadline is checked
-- before each read, so max_poll_seconds <= 0 returns nothing at all, as in 1.5.1.
begin;
select plan(5);

select lives_ok($$select pgmq.create('quiet')$$, 'create a queue');

select clock_timestamp() as t0 \gset
create temp table got as select * from pgmq.read_with_poll('quiet', 30, 1, 1, 100);
select clock_timestamp() as t1 \gset

select is_empty($$select * from got$$, 'nothing to read: empty result');
select ok(:'t1'::timestamptz - :'t0'::timestamptz >= interval '1 second', 'only after max_poll_seconds');
select ok(:'t1'::timestamptz - :'t0'::timestamptz < interval '10 seconds', 'and not much later');

select pgmq.send('quiet', '{}') \g /dev/null
select is_empty($$select * from pgmq.read_with_poll('quiet', 30, 1, 0, 100)$$,
                'max_poll_seconds 0: past the deadline before the first read');

select * from finish();
rollback;
