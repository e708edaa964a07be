-- A map whose only dependency was skipped by when_exhausted = skip maps over nothing: it
-- completes at once with [] and no tasks, and its own dependents start.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'list', when_exhausted => 'skip');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select pgflow.add_step('f', 'summary', array['each']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'list') \g /dev/null
select results_eq($$select status, initial_tasks, remaining_tasks, output from pgflow.step_states where step_slug = 'each'$$,
                  $$values ('completed', 0, 0, '[]'::jsonb)$$, 'each completed with []');
select is_empty($$select 1 from pgflow.step_tasks where step_slug = 'each'$$, 'each has no tasks');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'summary')$$,
                  $$values ('{"each": []}'::jsonb)$$, 'summary runs with {"each": []}');
select is((select remaining_steps from pgflow.runs), 1, 'only summary is left');

select * from finish();
rollback;
