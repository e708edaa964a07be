-- Timestamp checks keep events in order and at most one terminal timestamp per row.
begin;
select plan(7);

select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow_tests.poll_and_complete('sequential');

select throws_ok($$update pgflow.runs set completed_at = started_at - interval '1 s'$$, '23514',
  'new row for relation "runs" violates check constraint "completed_at_is_after_started_at"', 'run completed before start');
select throws_ok($$update pgflow.runs set completed_at = now(), failed_at = now()$$, '23514',
  'new row for relation "runs" violates check constraint "completed_at_or_failed_at"', 'run both completed and failed');
select throws_ok($$update pgflow.step_states set started_at = created_at - interval '1 s' where step_slug = 'first'$$, '23514',
  'new row for relation "step_states" violates check constraint "started_at_is_after_created_at"', 'step started before created');
select throws_ok($$update pgflow.step_states set failed_at = now() where step_slug = 'first'$$, '23514',
  'new row for relation "step_states" violates check constraint "completed_at_or_failed_at_or_skipped_at"',
  'step both completed and failed');
select throws_ok($$update pgflow.step_tasks set started_at = queued_at - interval '1 s'$$, '23514',
  'new row for relation "step_tasks" violates check constraint "started_at_is_after_queued_at"', 'task started before queued');
-- (after it was queued, so only the started_at check can refuse it)
select throws_ok($$update pgflow.step_tasks set started_at = queued_at + interval '10 s', completed_at = queued_at + interval '5 s'$$,
  '23514', 'new row for relation "step_tasks" violates check constraint "completed_at_is_after_started_at"',
  'task completed before it started');
select throws_ok($$update pgflow.step_tasks set failed_at = now()$$, '23514',
  'new row for relation "step_tasks" violates check constraint "completed_at_or_failed_at"', 'task both completed and failed');

select * from finish();
rollback;
