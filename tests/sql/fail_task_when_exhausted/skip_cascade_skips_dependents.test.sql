-- when_exhausted = skip-cascade skips the step (handler_failed) and every transitive dependent
-- (dependency_skipped); independent steps go on and the run completes with their outputs.
begin;
select plan(4);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'flaky', when_exhausted => 'skip-cascade');
select pgflow.add_step('f', 'other');
select pgflow.add_step('f', 'child', array['flaky']);
select pgflow.add_step('f', 'grandchild', array['child', 'other']);
select run_id as run from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.fail_step_task(:'run', 'flaky', 0, 'nope') \g /dev/null
select results_eq($$select step_slug, status, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('child', 'skipped', 'dependency_skipped'), ('flaky', 'skipped', 'handler_failed'),
                           ('grandchild', 'skipped', 'dependency_skipped'), ('other', 'started', null)$$,
                  'flaky and its dependents are skipped with their reasons');
select is((select remaining_steps from pgflow.runs), 1, 'remaining_steps 4 -> 1 (other)');
select is_empty($$select 1 from pgflow.step_tasks where step_slug in ('child', 'grandchild')$$,
                'no task was created for skipped dependents');
select pgflow_tests.complete_step_task(:'run', 'other', 0, '"O"') \g /dev/null
select results_eq($$select status, output from pgflow.runs$$, $$values ('completed', null::jsonb)$$,
                  'the run completes; its only leaf was skipped, so output is NULL');

select * from finish();
rollback;
