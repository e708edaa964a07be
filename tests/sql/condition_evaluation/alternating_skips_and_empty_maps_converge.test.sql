-- Condition skips and taskless completions feeding each other (skipped step -> empty map ->
-- conditional step -> empty map ...) are resolved until neither changes anything; then the
-- final ready step starts.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'c1', required_input_pattern => '{"go": true}');
select pgflow.add_step('f', 'm1', array['c1'], step_type => 'map');
select pgflow.add_step('f', 'c2', array['m1'], required_input_pattern => '{"m1": [1]}');
select pgflow.add_step('f', 'm2', array['c2'], step_type => 'map');
select pgflow.add_step('f', 'c3', array['m2'], required_input_pattern => '{"m2": [1]}');
select pgflow.add_step('f', 'm3', array['c3'], step_type => 'map');
select pgflow.add_step('f', 'final', array['m3'], required_input_pattern => '{"m3": []}');
select pgflow.start_flow('f', '{}') \g /dev/null

select results_eq($$select step_slug, status from pgflow.step_states s order by (select step_index from pgflow.steps p where p.step_slug = s.step_slug)$$,
                  $$values ('c1', 'skipped'), ('m1', 'completed'), ('c2', 'skipped'), ('m2', 'completed'),
                           ('c3', 'skipped'), ('m3', 'completed'), ('final', 'started')$$,
                  'skips and empty maps alternate; final (condition met) starts');
select results_eq($$select status, remaining_steps from pgflow.runs$$, $$values ('started', 1)$$, 'one step to go');

select * from finish();
rollback;
