-- A second complete_task for an already completed task (duplicate delivery) changes nothing:
-- the first output stays, counters are not decremented twice, dependents are not restarted.
begin;
select plan(5);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'first', 0, '"first output"') \g /dev/null

select results_eq($$select status, output from pgflow.complete_task((select run_id from pgflow.runs), 'first', 0, '"second output"')$$,
                  $$values ('completed', '"first output"'::jsonb)$$, 'returns the row with the first output');
select results_eq($$select output from pgflow.step_tasks where step_slug = 'first'$$,
                  $$values ('"first output"'::jsonb)$$, 'the task output is unchanged');
select results_eq($$select status, output from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('completed', '"first output"'::jsonb)$$, 'the step output is unchanged');
select is((select remaining_steps from pgflow.runs), 2, 'remaining_steps was decremented once');
select is((select count(*)::int from pgflow.step_tasks where step_slug = 'second'), 1,
          'the dependent has exactly one task');

select * from finish();
rollback;
