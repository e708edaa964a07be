-- Leaf maps appear in the run output with their aggregated arrays, next to single leaves.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'single_leaf');
select run_id as run from pgflow.start_flow('f', '["x", "y"]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 1, '"Y"') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'single_leaf', 0, '{"ok": true}') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '"X"') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$,
                  $$values ('completed', '{"items": ["X", "Y"], "single_leaf": {"ok": true}}'::jsonb)$$,
                  'both leaves in the run output');

select * from finish();
rollback;
