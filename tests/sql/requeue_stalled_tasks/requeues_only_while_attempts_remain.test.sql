-- A stalled task is requeued only while it has attempts left: its last attempt stalling fails
-- it as exhausted right away.
begin;
select plan(5);

select pgflow.create_flow('one', timeout => 1, max_attempts => 1);
select pgflow.add_step('one', 'work');
select pgflow.start_flow('one', '{}');
select pgflow_tests.ensure_worker('one');
select count(*) from pgflow.start_tasks('one', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute';

select is(pgflow.requeue_stalled_tasks(), 0, 'max_attempts 1: nothing requeued');
select results_eq($$select status, requeued_count, permanently_stalled_at is not null from pgflow.step_tasks$$,
                  $$values ('failed'::text, 0, true)$$, 'the task failed at its first stall');

-- Step-level max_attempts 2 overrides the flow's 10: one requeue, then failure.
select pgflow.create_flow('two', timeout => 1, max_attempts => 10);
select pgflow.add_step('two', 'work', max_attempts => 2);
select pgflow.start_flow('two', '{}');
select pgflow_tests.ensure_worker('two');
create function pg_temp.claim_and_stall() returns int language plpgsql as $$
begin
  perform pgflow.start_tasks('two', array(select message_id from pgflow.step_tasks where flow_slug = 'two'),
                             '11111111-1111-1111-1111-111111111111');
  update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 minute'
  where flow_slug = 'two';
  return pgflow.requeue_stalled_tasks();
end $$;
select is(pg_temp.claim_and_stall(), 1, 'attempt 1 of 2 stalls: requeued');
select is(pg_temp.claim_and_stall(), 0, 'attempt 2 of 2 stalls: not requeued');
select results_eq($$select status, requeued_count, attempts_count from pgflow.step_tasks where flow_slug = 'two'$$,
                  $$values ('failed'::text, 1, 2)$$, 'failed after one requeue and two attempts');

select * from finish();
rollback;
