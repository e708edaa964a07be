-- Called directly, it returns how many steps it completed over all waves, and 0 when nothing is
-- taskless and ready; steps with tasks or unknown task counts are left alone.
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'single');
select pgflow.add_step('f', 'dep_map', array['single'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset

select is(pgflow.cascade_complete_taskless_steps(:'run'), 0, 'nothing taskless: 0');
select results_eq($$select step_slug, status, initial_tasks from pgflow.step_states order by step_slug$$,
                  $$values ('dep_map', 'created', null::int), ('single', 'started', 1)$$, 'nothing changed');
-- Make dep_map ready with zero tasks by hand: one wave completes it.
update pgflow.step_states set remaining_deps = 0, initial_tasks = 0 where step_slug = 'dep_map';
select is(pgflow.cascade_complete_taskless_steps(:'run'), 1, 'one step completed: 1');

select * from finish();
rollback;
