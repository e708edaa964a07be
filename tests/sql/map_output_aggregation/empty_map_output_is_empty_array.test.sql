-- A map over [] outputs [] (not NULL), and a dependent single step sees [].
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'after', array['items']);
select run_id as run from pgflow.start_flow('f', '[]') \gset

select is((select output from pgflow.step_states where step_slug = 'items'), '[]'::jsonb, 'output []');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'after')$$,
                  $$values ('{"items": []}'::jsonb)$$, 'the dependent sees []');

select * from finish();
rollback;
