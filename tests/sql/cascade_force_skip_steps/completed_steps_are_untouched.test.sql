-- Only created or started steps are skipped: a completed step in the subtree stays completed
-- with its output and is not counted.
begin;
select plan(3);
select pgflow_tests.setup_flow('sequential');
select run_id as run from pgflow.start_flow('sequential', '{}') \gset
select pgflow_tests.complete_step_task(:'run', 'first', 0, '"F"') \g /dev/null

select is(pgflow._cascade_force_skip_steps(:'run', 'first', 'condition_unmet'), 2, 'skips second and last only');
select results_eq($$select step_slug, status, output, skip_reason from pgflow.step_states order by step_slug$$,
                  $$values ('first', 'completed', '"F"'::jsonb, null), ('last', 'skipped', null, 'dependency_skipped'),
                           ('second', 'skipped', null, 'dependency_skipped')$$,
                  'first stays completed; the trigger reason applies only to a step it skipped');
select is((select remaining_steps from pgflow.runs), 0, 'remaining_steps 2 -> 0');

select * from finish();
rollback;
