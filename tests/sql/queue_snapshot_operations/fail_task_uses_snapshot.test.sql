-- fail_task uses the task's queue snapshot: a retry delays the message in that queue, an
-- exhausted task's message is archived from it.
begin;
\i _move_to_alt.sql
select plan(6);

select pgflow.create_flow('f', max_attempts => 2, base_delay => 5, timeout => 5);
select pgflow.add_step('f', 'a');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a');
select pg_temp.move_to_alt('a') as a_msg \gset

select clock_timestamp() as t0 \gset
select is((select status from pgflow.fail_task(:'run', 'a', 0, 'boom')), 'queued', 'attempt 1 fails: retried');
select clock_timestamp() as t1 \gset
select ok(pgflow_tests.visible_after('a', 'alt', 10, :'t0', :'t1'),
          'the retry backoff (5 * 2^1 = 10 s) was set on the message in alt');
select is((pgflow_tests.queue_counts('f')).active + (pgflow_tests.queue_counts('f')).archived, 0::bigint,
          'the flow''s queue was not touched');

-- Attempt 2 (a second claim, simulated: the message now lives in alt) fails for good.
update pgflow.step_tasks set status = 'started', attempts_count = 2, started_at = now();
select is((select status from pgflow.fail_task(:'run', 'a', 0, 'boom again')), 'failed', 'attempt 2 fails: exhausted');
select results_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, array[:a_msg::bigint],
                  'the exhausted task''s message was archived from alt');
select is((pgflow_tests.queue_counts('alt')).active, 0::bigint, 'alt has no active message left');

select * from finish();
rollback;
