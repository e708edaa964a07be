-- Without a step override the flow's opt_max_attempts counts every attempt, the first included:
-- with 2, the first failure retries and the second fails the task.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'only');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status, attempts_count from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'only')$$,
                  $$values ('queued', 1)$$, 'attempt 1 of 2 fails: retried');
select results_eq($$select status, attempts_count from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'only')$$,
                  $$values ('failed', 2)$$, 'attempt 2 of 2 fails: failed');
select is((select status from pgflow.runs), 'failed', 'and the run failed');

select * from finish();
rollback;
