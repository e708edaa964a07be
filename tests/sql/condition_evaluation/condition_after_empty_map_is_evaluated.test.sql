-- A conditional step made ready by the taskless cascade (its dependency is an empty map) has its
-- condition evaluated before it runs; upstream's cascade could complete it without looking.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'strict', array['items'], step_type => 'map',
                       required_input_pattern => '{"items": [1]}', when_unmet => 'fail');
select pgflow.add_step('f', 'skippy', array['items'], step_type => 'map',
                       required_input_pattern => '{"items": [1]}');
select pgflow.add_step('f', 'runs', array['items'], step_type => 'map',
                       forbidden_input_pattern => '{"items": [1]}');
select pgflow.start_flow('f', '[]') \g /dev/null

select results_eq($$select step_slug, status, error_message from pgflow.step_states order by step_slug$$,
                  $$values ('items', 'completed', null), ('runs', 'completed', null),
                           ('skippy', 'created', null), ('strict', 'failed', 'Condition not met')$$,
                  'strict fails on its unmet condition; runs completes; skippy is left (the run failed)');
select is((select status from pgflow.runs), 'failed', 'the run failed');

update pgflow.steps set when_unmet = 'skip' where step_slug = 'strict';
select pgflow.start_flow('f', '[]') \g /dev/null
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states
                    where run_id = (select run_id from pgflow.runs where status <> 'failed') order by step_slug$$,
                  $$values ('items', 'completed', null), ('runs', 'completed', null),
                           ('skippy', 'skipped', 'condition_unmet'), ('strict', 'skipped', 'condition_unmet')$$,
                  'with skip: the unmet ones are skipped, not completed');
select results_eq($$select status, output from pgflow.runs where status <> 'failed'$$,
                  $$values ('completed', '{"runs": []}'::jsonb)$$, 'and the run output holds only the step that ran');

select * from finish();
rollback;
