-- With visible messages read_with_poll behaves like read: qty, vt, read_ct, conditional.
begin;
select plan(6);

select lives_ok($$select pgmq.create('jobs')$$, 'create a queue');
select pgmq.send_batch('jobs', array['{"k": "a"}', '{"k": "b"}', '{"k": "a"}', '{"k": "b"}']::jsonb[]) \g /dev/null

-- A one-hour max_poll_seconds: that the call returns at all shows it did not wait for it.
select clock_timestamp() as t0 \gset
create temp table got as select * from pgmq.read_with_poll('jobs', 30, 2, 3600, 100);
select clock_timestamp() as t1 \gset

select results_eq($$select msg_id, read_ct, message from got order by msg_id$$,
                  $$values (1::bigint, 1, '{"k": "a"}'::jsonb), (2, 1, '{"k": "b"}')$$,
                  'up to qty messages, lowest ids first, read_ct incremented');
select ok((select bool_and(vt between :'t0'::timestamptz + interval '30 s' and :'t1'::timestamptz + interval '30 s') from got),
          'vt is now + vt seconds');
select ok(:'t1'::timestamptz < :'t0'::timestamptz + interval '3600 seconds', 'it did not wait for the deadline');
select results_eq($$select msg_id from pgmq.read_with_poll('jobs', 30, 5, 1, 100, '{"k": "b"}')$$,
                  $$values (4::bigint)$$, 'the conditional filter applies');
select results_eq($$select msg_id from pgmq.read_with_poll(queue_name => 'jobs', vt => 30, qty => 5)$$,
                  $$values (3::bigint)$$, 'max_poll_seconds, poll_interval_ms and conditional have defaults');

select * from finish();
rollback;
