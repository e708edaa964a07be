-- A retry clears the task's started_at (queued_at is kept); exhaustion sets failed_at on the
-- task, the step and the run, and no completed_at.
begin;
select plan(4);

select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'work');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.poll_and_fail('f');

select results_eq($$select status, queued_at = now(), started_at, failed_at from pgflow.step_tasks$$,
                  $$values ('queued'::text, true, null::timestamptz, null::timestamptz)$$,
                  'after a retry: queued_at kept, started_at cleared, no failed_at');
select pgflow_tests.poll_and_fail('f');
select results_eq($$select status, started_at = now(), failed_at = now(), completed_at from pgflow.step_tasks$$,
                  $$values ('failed'::text, true, true, null::timestamptz)$$, 'failed task: started_at and failed_at');
select results_eq($$select status, started_at = now(), failed_at = now(), completed_at, skipped_at from pgflow.step_states$$,
                  $$values ('failed'::text, true, true, null::timestamptz, null::timestamptz)$$, 'failed step: failed_at');
select results_eq($$select status, failed_at = now(), completed_at from pgflow.runs$$,
                  $$values ('failed'::text, true, null::timestamptz)$$, 'failed run: failed_at');

select * from finish();
rollback;
