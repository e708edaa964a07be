-- A root map over [] and a map depending on it complete inside start_flow with [] and no
-- tasks; the single step after them runs with {"more": []}; the run completes.
begin;
select plan(6);
select pgflow_tests.install_realtime_stub();
select pgflow.create_flow('f');
select pgflow.add_step('f', 'items', step_type => 'map');
select pgflow.add_step('f', 'more', array['items'], step_type => 'map');
select pgflow.add_step('f', 'count', array['more']);
select run_id as run from pgflow.start_flow('f', '[]') \gset

select results_eq($$select step_slug, status, initial_tasks, output from pgflow.step_states order by step_slug$$,
                  $$values ('count', 'started', 1, null::jsonb), ('items', 'completed', 0, '[]'), ('more', 'completed', 0, '[]')$$,
                  'both maps completed empty, count started');
select is((select remaining_steps from pgflow.runs), 1, 'one step to go');
create temp table c1 as select * from pgflow_tests.read_and_start('f', 30, 10);
select results_eq($$select step_slug, input from c1$$, $$values ('count', '{"more": []}'::jsonb)$$, 'count gets the empty array');
select pgflow.complete_task(run_id, step_slug, task_index, to_jsonb(jsonb_array_length(input->'more'))) from c1 \g /dev/null

select results_eq($$select status, remaining_steps, output from pgflow.runs$$, $$values ('completed', 0, '{"count": 0}'::jsonb)$$,
                  'the run completed');
select is((select count(*)::int from pgflow.step_tasks), 1, 'only count had a task');
select results_eq($$select event from pgflow_tests.realtime_events((select run_id from pgflow.runs))$$,
                  $$values ('run:started'), ('step:items:completed'), ('step:more:completed'), ('step:count:started'),
                           ('step:count:completed'), ('run:completed')$$,
                  'events in order');

select * from finish();
rollback;
