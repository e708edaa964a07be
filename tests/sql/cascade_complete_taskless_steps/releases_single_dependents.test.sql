-- A single step depending on an empty map starts with {map: []} as input; a step waiting for
-- a further dependency keeps waiting.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'summary', array['items']);
select pgflow.add_step('f', 'join', array['items', 'other']);
select run_id as run from pgflow.start_flow('f', '[]') \gset

select results_eq($$select step_slug, status, remaining_deps from pgflow.step_states order by step_slug$$,
                  $$values ('items', 'completed', 0), ('join', 'created', 1), ('other', 'started', 0), ('summary', 'started', 0)$$,
                  'summary started, join waits for other');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'summary')$$,
                  $$values ('{"items": []}'::jsonb)$$, 'summary''s input holds the empty array');
select is((select remaining_steps from pgflow.runs), 3, 'the run counted the empty map as done');

select * from finish();
rollback;
