-- One step_states row per step: remaining_deps = deps_count, initial_tasks 1 for single steps,
-- root steps started, the others created.
begin;
select plan(3);

select pgflow_tests.setup_flow('two_roots');
select run_id as run from pgflow.start_flow('two_roots', '{}') \gset

select results_eq(
  $$select step_slug, status, remaining_deps, initial_tasks, remaining_tasks from pgflow.step_states
    where run_id = '$$ || :'run' || $$' order by step_slug$$,
  $$values ('last'::text, 'created'::text, 2, 1, null::int), ('root_a', 'started', 0, 1, 1),
           ('root_b', 'started', 0, 1, 1)$$,
  'step states of a two-roots flow');
select is((select count(*) from pgflow.step_states where flow_slug = 'two_roots'), 3::bigint, 'one per step');
select ok((select bool_and(created_at = now()) from pgflow.step_states), 'created_at is the transaction time');

select * from finish();
rollback;
