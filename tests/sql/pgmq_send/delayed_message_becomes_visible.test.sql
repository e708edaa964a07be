-- A delayed message is invisible until its vt, then readable.
begin;
select plan(5);

select lives_ok($$select pgmq.create('later')$$, 'create a queue');
select pgmq.send('later', '{"due": "soon"}', 1) as id \gset
select pgmq.send('later', '{"due": "past"}', now() - interval '1 hour') as past \gset

select results_eq($$select msg_id from pgmq.read('later', 0, 10)$$, array[:past::bigint],
                  'a vt in the past is visible at once; the 1-second delay is not');
select is_empty($$select * from pgmq.pop('later') where msg_id = $$ || :id,
                'pop does not see the delayed message either');
select pg_sleep(1.1) \g /dev/null
select results_eq($$select msg_id, message from pgmq.read('later', 30, 10)$$,
                  format($$values (%s::bigint, '{"due": "soon"}'::jsonb)$$, :id),
                  'after the delay it is visible');
select is_empty($$select * from pgmq.read('later', 30, 10)$$, 'and reading hid it again');

select * from finish();
rollback;
