-- Map -> map: child task i receives element i of the parent's aggregated output, and the child
-- output is aggregated again in order.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'double', step_type => 'map');
select pgflow.add_step('f', 'label', array['double'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '[1, 2, 3]') \gset

select pgflow_tests.complete_step_task(:'run', 'double', i, to_jsonb((i + 1) * 2))
from unnest(array[2, 0, 1]) i \g /dev/null
select results_eq($$select t.task_index, t.input from pgflow.step_tasks s, pgflow_tests.start_task(s.run_id, 'label', s.task_index) t
                    where s.step_slug = 'label' order by t.task_index$$,
                  $$values (0, '2'::jsonb), (1, '4'), (2, '6')$$, 'child tasks get the parent''s elements');
select pgflow.complete_task(:'run', 'label', i, to_jsonb('#' || i)) from unnest(array[1, 2, 0]) i \g /dev/null
select is((select output from pgflow.step_states where step_slug = 'label'), '["#0", "#1", "#2"]'::jsonb,
          'the child output is ordered');
select is((select output from pgflow.runs), '{"label": ["#0", "#1", "#2"]}'::jsonb, 'the leaf map is the run output');

select * from finish();
rollback;
