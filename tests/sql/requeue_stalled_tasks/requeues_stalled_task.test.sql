-- A requeued task is queued again without a worker, counted, and its message is visible at once
-- so any worker can claim it; the attempt count is kept.
begin;
select plan(5);

select pgflow_tests.setup_flow('sequential');  -- timeout 1
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select count(*) from pgflow_tests.read_and_start('sequential', 60);
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';

select is(pgflow.requeue_stalled_tasks(), 1, 'returns the number of requeued tasks');
select results_eq(
  $$select status, started_at, last_worker_id, requeued_count, last_requeued_at = now(), attempts_count,
           permanently_stalled_at
    from pgflow.step_tasks$$,
  $$values ('queued'::text, null::timestamptz, null::uuid, 1, true, 1, null::timestamptz)$$,
  'queued, no start time or worker, requeued_count 1, last_requeued_at set, attempt kept');
select ok((select vt_seconds <= 0 from pgflow_tests.message_timing('first', 'sequential')), 'the message is visible now');
select results_eq($$select step_slug, input from pgflow_tests.read_and_start('sequential', 60)$$,
                  $$values ('first'::text, '{}'::jsonb)$$, 'a worker reads and claims it again');
select is((select attempts_count from pgflow.step_tasks), 2, 'the new claim is attempt 2');

select * from finish();
rollback;
