-- SQL NULL and JSON null outputs for a single step feeding a map are type violations too
-- ("null" in the messages).
begin;
select plan(3);
select pgflow.create_flow('f');
select pgflow.add_step('f', 'list');
select pgflow.add_step('f', 'each', array['list'], step_type => 'map');
select run_id as r1 from pgflow.start_flow('f', '{}') \gset
select run_id as r2 from pgflow.start_flow('f', '{}') \gset

select pgflow_tests.complete_step_task(:'r1', 'list', 0, null) \g /dev/null
select pgflow_tests.complete_step_task(:'r2', 'list', 0, 'null'::jsonb) \g /dev/null
select is((select count(*)::int from pgflow.runs where status = 'failed'), 2, 'both runs failed');
select is((select count(*)::int from pgflow.step_tasks where error_message = '[TYPE_VIOLATION] Produced null instead of array'), 2,
          'both tasks: Produced null');
select is((select count(*)::int from pgflow.step_states
           where error_message = '[TYPE_VIOLATION] Map step each expects array input but dependency list produced null'), 2,
          'both steps: dependency list produced null');

select * from finish();
rollback;
