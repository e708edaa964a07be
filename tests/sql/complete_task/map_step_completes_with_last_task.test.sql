-- A map step counts its tasks down: each completion decrements remaining_tasks, the step stays
-- started (no output) until the last task, and only then completes and releases the run counter.
begin;
select plan(5);
select pgflow.create_flow('m');
select pgflow.add_step('m', 'items', step_type => 'map');
select run_id as run from pgflow.start_flow('m', '[10, 20, 30]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 1, '"b"') \g /dev/null
select results_eq($$select status, remaining_tasks, output from pgflow.step_states$$,
                  $$values ('started', 2, null::jsonb)$$, 'after one of three: started, 2 remaining, no output');
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"a"') \g /dev/null
select results_eq($$select status, remaining_tasks from pgflow.step_states$$,
                  $$values ('started', 1)$$, 'after two of three: 1 remaining');
select is((select remaining_steps from pgflow.runs), 1, 'the run still has the step to go');
select pgflow_tests.complete_step_task(:'run', 'items', 2, '"c"') \g /dev/null
select results_eq($$select status, remaining_tasks, output from pgflow.step_states$$,
                  $$values ('completed', 0, '["a", "b", "c"]'::jsonb)$$, 'after the last: completed with ordered output');
select results_eq($$select status, output from pgflow.runs$$,
                  $$values ('completed', '{"items": ["a", "b", "c"]}'::jsonb)$$, 'and the run completed');

select * from finish();
rollback;
