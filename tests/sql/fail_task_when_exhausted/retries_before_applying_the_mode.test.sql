-- when_exhausted applies only when retries run out: earlier failures retry as usual.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 2, base_delay => 0);
select pgflow.add_step('f', 'flaky', when_exhausted => 'skip-cascade');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'flaky')$$,
                  $$values ('queued')$$, 'attempt 1 fails: retried');
select is((select status from pgflow.step_states), 'started', 'the step is not skipped yet');
select pgflow_tests.fail_step_task(:'run', 'flaky') \g /dev/null
select results_eq($$select s.status, r.status from pgflow.step_states s, pgflow.runs r$$,
                  $$values ('skipped', 'completed')$$, 'attempt 2 fails: skipped, and the run completes');

select * from finish();
rollback;
