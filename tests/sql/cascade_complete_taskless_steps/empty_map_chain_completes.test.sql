-- Maps depending on an empty map map over [] too: the whole chain completes in the same call,
-- each step with output [].
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'm1', step_type => 'map');
select pgflow.add_step('f', 'm2', array['m1'], step_type => 'map');
select pgflow.add_step('f', 'm3', array['m2'], step_type => 'map');
select pgflow.start_flow('f', '[]') \g /dev/null

select results_eq($$select step_slug, status, initial_tasks, output from pgflow.step_states order by step_slug$$,
                  $$values ('m1', 'completed', 0, '[]'::jsonb), ('m2', 'completed', 0, '[]'::jsonb), ('m3', 'completed', 0, '[]'::jsonb)$$,
                  'all three completed with []');
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', '{"m3": []}'::jsonb)$$,
                  'the run completes with the last map as leaf');

select * from finish();
rollback;
