-- A single step stores its task's output in step_states.output when it completes, in the same
-- update that sets status completed; the task keeps its own copy.
begin;
select plan(3);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset

select is((select output from pgflow.step_states where step_slug = 'first'), null::jsonb, 'NULL before completion');
select pgflow_tests.complete_step_task(:'run', 'first', 0, '{"data": [1, 2]}') \g /dev/null
select results_eq($$select status, output from pgflow.step_states where step_slug = 'first'$$,
                  $$values ('completed', '{"data": [1, 2]}'::jsonb)$$, 'stored with the completion');
select is((select output from pgflow.step_tasks where step_slug = 'first'), '{"data": [1, 2]}'::jsonb,
          'the task keeps the same output');

select * from finish();
rollback;
