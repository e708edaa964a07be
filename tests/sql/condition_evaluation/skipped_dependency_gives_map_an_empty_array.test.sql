-- A map whose only dependency was skipped by its condition maps over an empty array: it
-- completes with [] and no tasks.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list', required_input_pattern => '{"load": true}');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select pgflow.start_flow('f', '{"load": false}') \g /dev/null

select results_eq($$select step_slug, status, initial_tasks, output from pgflow.step_states order by step_slug$$,
                  $$values ('each', 'completed', 0, '[]'::jsonb), ('list', 'skipped', 1, null)$$,
                  'list skipped, each completed with []');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"each": []}'::jsonb)$$,
                  'the run completes with the empty map as leaf');

select * from finish();
rollback;
