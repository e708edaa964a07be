-- A condition is tested against completed dependencies only: a skipped dependency is absent
-- (not null), and with every dependency skipped the value is {}.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a', required_input_pattern => '{"run_a": true}');
select pgflow.add_step('f', 'b');
-- {"a": null} would contain {"a": null}; an absent key does not.
select pgflow.add_step('f', 'a_is_null', array['a', 'b'], required_input_pattern => '{"a": null}');
-- {} contains the empty pattern {} only: a step with if {} runs even with every dependency skipped.
select pgflow.add_step('f', 'nothing', array['a'], required_input_pattern => '{}');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'b', 0, '"B"') \g /dev/null

select results_eq($$select status, skip_reason from pgflow.step_states where step_slug = 'a_is_null'$$,
                  $$values ('skipped', 'condition_unmet')$$, 'the skipped dependency is absent, not null');
select results_eq($$select input from pgflow_tests.start_task((select run_id from pgflow.runs), 'nothing')$$,
                  $$values ('{}'::jsonb)$$, 'with all dependencies skipped the value (and the input) is {}, which contains {}');

select * from finish();
rollback;
