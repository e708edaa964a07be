-- A taskless step with an unmet condition is not completed by the cascade: it stays created
-- for cascade_resolve_conditions; one whose condition holds completes.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'single');
select pgflow.add_step('f', 'met', array['single'], step_type => 'map', required_input_pattern => '{"single": []}');
select pgflow.add_step('f', 'unmet', array['single'], step_type => 'map', required_input_pattern => '{"single": [1]}');
select run_id as run from pgflow.start_flow('f', '{}') \gset
-- Release both maps by hand, as if single had completed with [] (conditions not yet resolved).
update pgflow.step_states set status = 'completed', completed_at = now(), remaining_tasks = 0, output = '[]'
 where step_slug = 'single';
update pgflow.step_states set remaining_deps = 0, initial_tasks = 0 where step_slug in ('met', 'unmet');

select is(pgflow.cascade_complete_taskless_steps(:'run'), 1, 'completes one step');
select results_eq($$select step_slug, status from pgflow.step_states where step_slug <> 'single' order by step_slug$$,
                  $$values ('met', 'completed'), ('unmet', 'created')$$, 'the unmet one is left created');
select pgflow.cascade_resolve_conditions(:'run') \g /dev/null
select results_eq($$select status, skip_reason from pgflow.step_states where step_slug = 'unmet'$$,
                  $$values ('skipped', 'condition_unmet')$$, 'condition resolution then skips it');

select * from finish();
rollback;
