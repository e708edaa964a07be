-- Upstream left a task stalled for the 4th time "started" forever, so its run never finished.
-- Ours marks it permanently stalled and fails it as exhausted (when_exhausted = fail here):
-- the step and the run fail and the message is archived.
begin;
select plan(8);

select pgflow.create_flow('s', timeout => 1, max_attempts => 10);
select pgflow.add_step('s', 'work');
select run_id as run from pgflow.start_flow('s', '{}') \gset
select pgflow_tests.ensure_worker('s');

create function pg_temp.claim_and_stall() returns int language plpgsql as $$
begin
  perform pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
  update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';
  return pgflow.requeue_stalled_tasks();
end $$;

select is(pg_temp.claim_and_stall(), 1, 'first stall: requeued');
select is(pg_temp.claim_and_stall(), 1, 'second stall: requeued');
select is(pg_temp.claim_and_stall(), 1, 'third stall: requeued');
select is(pg_temp.claim_and_stall(), 0, 'fourth stall: not requeued');

select results_eq(
  $$select status, requeued_count, attempts_count, permanently_stalled_at = now(), failed_at = now(), error_message
    from pgflow.step_tasks$$,
  $$values ('failed'::text, 3, 4, true, true, 'Task stalled: no result within the 1 s timeout (+30 s) after 3 requeues'::text)$$,
  'the task is permanently stalled and failed with an explanation');
select results_eq($$select status, error_message from pgflow.step_states$$,
                  $$values ('failed'::text, 'Task stalled: no result within the 1 s timeout (+30 s) after 3 requeues'::text)$$,
                  'the step failed');
select is((select status from pgflow.runs), 'failed', 'the run finished (failed)');
select results_eq($$select * from pgflow_tests.queue_counts('s')$$, $$values (0::bigint, 1::bigint)$$,
                  'the message was archived');

select * from finish();
rollback;
