-- When every step is skipped at start the run completes inside start_flow with output NULL.
begin;
select plan(2);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'a', required_input_pattern => '{"x": 1}', when_unmet => 'skip-cascade');
select pgflow.add_step('f', 'b', array['a']);
-- every object contains {}, so ifNot {} is never met
select pgflow.add_step('f', 'c', forbidden_input_pattern => '{}');

select results_eq($$select status, remaining_steps, output from pgflow.start_flow('f', '{}')$$,
                  $$values ('completed', 0, null::jsonb)$$, 'start_flow returns the completed run');
select results_eq($$select step_slug, status from pgflow.step_states order by step_slug$$,
                  $$values ('a', 'skipped'), ('b', 'skipped'), ('c', 'skipped')$$,
                  'a (skip-cascade), b (its dependent) and c are skipped');

select * from finish();
rollback;
