-- start_run is start_flow returning only the run id: the run, its step states, its tasks and
-- its messages are those start_flow leaves for the same input.
begin;
select plan(5);

select pgflow_tests.setup_flow('two_roots');
select run_id as by_start_flow from pgflow.start_flow('two_roots', '{"n": 1}') \gset
select pgflow.start_run('two_roots', '{"n": 1}') as by_start_run \gset

select isnt(:'by_start_run'::uuid, :'by_start_flow'::uuid, 'a new run id is generated');
select is((select (flow_slug, status, input, remaining_steps)::text from pgflow.runs where run_id = :'by_start_run'),
          (select (flow_slug, status, input, remaining_steps)::text from pgflow.runs where run_id = :'by_start_flow'),
          'the returned id is a started run of the flow, with the input');
select results_eq(
  format($$select step_slug, status, remaining_deps, initial_tasks, remaining_tasks from pgflow.step_states
           where run_id = %L order by step_slug$$, :'by_start_run'),
  format($$select step_slug, status, remaining_deps, initial_tasks, remaining_tasks from pgflow.step_states
           where run_id = %L order by step_slug$$, :'by_start_flow'),
  'the same step states');
select results_eq(
  format($$select step_slug, task_index, status from pgflow.step_tasks where run_id = %L order by 1, 2$$, :'by_start_run'),
  format($$select step_slug, task_index, status from pgflow.step_tasks where run_id = %L order by 1, 2$$, :'by_start_flow'),
  'the same tasks');
select is((select count(*) from pgmq.q_two_roots where message->>'run_id' = :'by_start_run'), 2::bigint,
          'a message for each root step');

select * from finish();
rollback;
