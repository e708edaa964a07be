-- A single step depending on a map receives the whole aggregated array under the map's slug.
begin;
select plan(1);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'sum', array['items']);
select run_id as run from pgflow.start_flow('f', '[5, 6]') \gset

select pgflow_tests.complete_step_task(:'run', 'items', 1, '{"v": 6}') \g /dev/null
select pgflow_tests.complete_step_task(:'run', 'items', 0, '{"v": 5}') \g /dev/null
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'sum')$$,
                  $$values ('{"items": [{"v": 5}, {"v": 6}]}'::jsonb)$$, 'the whole array, in order');

select * from finish();
rollback;
