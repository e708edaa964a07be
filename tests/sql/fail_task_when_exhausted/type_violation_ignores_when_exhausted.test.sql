-- A type violation (a single step feeding a map returns a non-array) always fails the run, even
-- when the step's when_exhausted is skip.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list', when_exhausted => 'skip');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select results_eq($$select status from pgflow_tests.complete_step_task((select run_id from pgflow.runs), 'list', 0, '{"not": "array"}')$$,
                  $$values ('failed')$$, 'the task fails');
select results_eq($$select status, skip_reason from pgflow.step_states where step_slug = 'list'$$,
                  $$values ('failed', null::text)$$, 'the step is failed, not skipped');
select is((select status from pgflow.runs), 'failed', 'the run failed');

select * from finish();
rollback;
