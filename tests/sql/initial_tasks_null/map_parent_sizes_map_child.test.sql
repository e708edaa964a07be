-- Map -> map: the child map's initial_tasks is the parent's number of tasks, set when the
-- parent's last task completes.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'parent', step_type => 'map');
select pgflow.add_step('f', 'child', array['parent'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3, 4]') \gset

select pgflow_tests.complete_step_task(:'run', 'parent', i, to_jsonb(i * 10)) from generate_series(0, 2) i \g /dev/null
select is((select initial_tasks from pgflow.step_states where step_slug = 'child'), null::int,
          'still unknown while a parent task is pending');
select pgflow_tests.complete_step_task(:'run', 'parent', 3, '30') \g /dev/null
select results_eq($$select initial_tasks, status from pgflow.step_states where step_slug = 'child'$$,
                  $$values (4, 'started')$$, 'four after the last parent task');

select * from finish();
rollback;
