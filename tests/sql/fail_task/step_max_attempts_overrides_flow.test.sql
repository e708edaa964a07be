-- A step's opt_max_attempts overrides the flow's, in both directions.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1, base_delay => 0);
select pgflow.add_step('f', 'more', max_attempts => 3, when_exhausted => 'skip');
select pgflow.add_step('f', 'fewer');
update pgflow.flows set opt_max_attempts = 5;
update pgflow.steps set opt_max_attempts = 1 where step_slug = 'fewer';
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'more')
                    union all select status from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'more')$$,
                  $$values ('queued'), ('queued')$$, 'step allows 3 (flow 5): attempts 1 and 2 retry');
select results_eq($$select status, attempts_count from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'more')$$,
                  $$values ('failed', 3)$$, 'attempt 3 exhausts the step''s limit');
select results_eq($$select status, attempts_count from pgflow_tests.fail_step_task((select run_id from pgflow.runs), 'fewer')$$,
                  $$values ('failed', 1)$$, 'step allows 1 (flow 5): the first failure is final');
select is((select status from pgflow.runs), 'failed', 'the run failed through step fewer');

select * from finish();
rollback;
