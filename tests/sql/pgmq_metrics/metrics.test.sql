-- metrics(q): lengths, message ages, total ever sent and scrape time for one queue.
begin;
select plan(8);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');

select results_eq($$select queue_name, queue_length, newest_msg_age_sec, oldest_msg_age_sec, total_messages,
                           scrape_time = now(), queue_visible_length from pgmq.metrics('jobs')$$,
                  $$values ('jobs'::text, 0::bigint, null::integer, null::integer, 0::bigint, true, 0::bigint)$$,
                  'an empty, never used queue: zero lengths, NULL ages, total 0');

select pgmq.send_batch('jobs', array['{"n": 1}', '{"n": 2}', '{"n": 3}']::jsonb[]) \g /dev/null
select pgmq.send('jobs', '{"n": 4}', 3600) \g /dev/null
select pgmq.read('jobs', 3600, 1) \g /dev/null
select pgmq.archive('jobs', 2::bigint) \g /dev/null
-- Visibility in metrics is judged against now(), the transaction start, which is earlier than
-- the vt of messages sent in this transaction: make message 3 due at now().
update pgmq.q_jobs set vt = now() where msg_id = 3;

select results_eq($$select queue_length, queue_visible_length, total_messages from pgmq.metrics('jobs')$$,
                  $$values (3::bigint, 1::bigint, 4::bigint)$$,
                  'queue_length counts all queued messages, queue_visible_length those with vt <= now(), total_messages all ever sent');
select results_eq($$select newest_msg_age_sec, oldest_msg_age_sec from pgmq.metrics('jobs')$$,
                  $$values (0, 0)$$, 'ages in whole seconds since enqueued_at (all sent in this transaction)');

update pgmq.q_jobs set enqueued_at = now() - interval '90 seconds' where msg_id = 1;
select results_eq($$select newest_msg_age_sec, oldest_msg_age_sec from pgmq.metrics('jobs')$$,
                  $$values (0, 90)$$, 'oldest_msg_age_sec follows the oldest enqueued_at');

select pgmq.purge_queue('jobs') \g /dev/null
select results_eq($$select queue_length, total_messages from pgmq.metrics('jobs')$$,
                  $$values (0::bigint, 4::bigint)$$, 'total_messages survives a purge');
select is((select queue_name from pgmq.metrics('JOBS')), 'JOBS', 'the name is echoed as passed');
select throws_ok($$select pgmq.metrics('missing')$$, '42P01', 'relation "pgmq.q_missing" does not exist', 'a missing queue fails');

select * from finish();
rollback;
