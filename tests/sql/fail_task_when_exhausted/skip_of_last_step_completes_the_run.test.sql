-- When the skipped step was the last one to go, the run completes; a skipped leaf is left out
-- of the run output.
begin;
select plan(3);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'first');
select pgflow.add_step('f', 'second', array['first']);
select pgflow.add_step('f', 'side', array['first'], when_exhausted => 'skip');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'first', 0, '1') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'second', 0, '2') \g /dev/null
select is((select status from pgflow.runs), 'started', 'started while side is pending');
select pgflow_tests.fail_step_task(:'run', 'side') \g /dev/null
select results_eq($$select status, remaining_steps, output from pgflow.runs$$,
                  $$values ('completed', 0, '{"second": 2}'::jsonb)$$, 'completed; the skipped leaf is not in the output');
select ok((select completed_at is not null and failed_at is null from pgflow.runs), 'completed_at set, failed_at not');

select * from finish();
rollback;
