-- A dependent map whose parent completes with [] (from complete_task) completes at once,
-- together with its own empty dependents, in that complete_task call.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select pgflow.add_step('f', 'again', array['each'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'run', 'list', 0, '[]') \g /dev/null
select results_eq($$select step_slug, status, initial_tasks, output from pgflow.step_states order by step_slug$$,
                  $$values ('again', 'completed', 0, '[]'::jsonb), ('each', 'completed', 0, '[]'::jsonb),
                           ('list', 'completed', 1, '[]'::jsonb)$$, 'both maps completed empty');
select is((select count(*)::int from pgflow.step_tasks), 1, 'only list had a task');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"again": []}'::jsonb)$$,
                  'the run completes');

select * from finish();
rollback;
