-- when_unmet = skip-cascade skips the step (condition_unmet) and everything downstream of it
-- (dependency_skipped), including steps that also depend on other, running steps.
begin;
select plan(4);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'gate', required_input_pattern => '{"go": true}', when_unmet => 'skip-cascade');
select pgflow.add_step('f', 'side');
select pgflow.add_step('f', 'child', array['gate']);
select pgflow.add_step('f', 'join', array['child', 'side']);
select run_id as run from pgflow.start_flow('f', '{"go": false}') \gset

select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('child', 'skipped', 'dependency_skipped'), ('gate', 'skipped', 'condition_unmet'),
                           ('join', 'skipped', 'dependency_skipped'), ('side', 'started', null)$$,
                  'gate, child and join are skipped at start');
select is((select remaining_steps from pgflow.runs), 1, 'only side remains');
select is(array(select step_slug from pgflow.step_tasks), array['side'], 'only side has a task');
select pgflow_tests.complete_step_task(:'run', 'side', 0, '1') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', null::jsonb)$$,
                  'the run completes; its only leaf (join) was skipped');

select * from finish();
rollback;
