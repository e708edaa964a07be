-- On a failed run the cascade does nothing: a taskless, ready step stays created.
begin;
select plan(2);
select pgflow.create_flow('f', max_attempts => 1);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select pgflow.add_step('f', 'm', array['b'], step_type => 'map');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.fail_step_task(:'run', 'a') \g /dev/null
update pgflow.step_states set remaining_deps = 0, initial_tasks = 0 where step_slug = 'm';

select is(pgflow.cascade_complete_taskless_steps(:'run'), 0, 'returns 0');
select results_eq($$select status, output from pgflow.step_states where step_slug = 'm'$$,
                  $$values ('created', null::jsonb)$$, 'the step stays created');

select * from finish();
rollback;
