-- An empty poll returns nothing once max_poll_seconds have passed. The deadline is checked
-- before each read, so max_poll_seconds <= 0 returns nothing at all, as in 1.5.1.
begin;
select plan(4);

select lives_ok($$select pgmq.create('quiet')$$, 'create a queue');

-- A message that becomes visible 600 s from now: a poll that ran past its 1-second deadline
-- (and kept reading) would return it. That a correct poll has returned long before is the one
-- wall-clock assumption here, with ten minutes of slack.
select pgmq.send('quiet', '{}', 600) \g /dev/null
select clock_timestamp() as t0 \gset
create temp table got as select * from pgmq.read_with_poll('quiet', 30, 1, 1, 100);
select clock_timestamp() as t1 \gset

select is_empty($$select * from got$$, 'nothing visible before the deadline: empty result, not the late message');
select ok(:'t1'::timestamptz - :'t0'::timestamptz >= interval '1 second', 'only after max_poll_seconds');

select pgmq.send('quiet', '{}') \g /dev/null
select is_empty($$select * from pgmq.read_with_poll('quiet', 30, 1, 0, 100)$$,
                'max_poll_seconds 0: past the deadline before the first read');

select * from finish();
rollback;
