-- Step-queued versions of one alias each have their own private step queues. After switching
-- the alias, new runs go to V2's queues, while a V1 run in flight keeps creating and executing
-- its tasks in V1's queues: no task moves between versions.
begin;
select plan(6);

select pgflow_tests.deploy('orderV1', 'order', jsonb_build_array(
  pgflow_tests.step_shape('pay'), pgflow_tests.step_shape('ship', array['pay'])), 'step');
select pgflow_tests.deploy('orderV2', 'order', jsonb_build_array(
  pgflow_tests.step_shape('pay'), pgflow_tests.step_shape('ship', array['pay'])), 'step');
select is(array(select queue_name::text from pgmq.meta order by 1),
          array['orderv1__pay', 'orderv1__ship', 'orderv2__pay', 'orderv2__ship'],
          'each version has its private step queues');

select run_id as v1_run from pgflow.start_flow('order', '{}') \gset
select pgflow.activate_flow_version('order', 'orderV2', 'orderV1');
select run_id as v2_run from pgflow.start_flow('order', '{}') \gset
select is((select flow_slug from pgflow.runs where run_id = :'v2_run'), 'orderV2', 'a new run starts V2');

select pgflow_tests.complete_step_task(:'v1_run', 'pay');
select results_eq($$select step_slug, queue_name from pgflow.step_tasks where run_id = '$$ || :'v1_run' || $$' order by step_slug$$,
                  $$values ('pay'::text, 'orderv1__pay'::text), ('ship', 'orderv1__ship')$$,
                  'the V1 run''s next task goes to V1''s queue after the switch');
select is((pgflow_tests.queue_counts('orderv1__ship')).active, 1::bigint, 'its message is there');
select pgflow_tests.complete_step_task(:'v1_run', 'ship');
select is((select status from pgflow.runs where run_id = :'v1_run'), 'completed', 'and the V1 run completes on V1');
select results_eq($$select step_slug, queue_name from pgflow.step_tasks where run_id = '$$ || :'v2_run' || $$'$$,
                  $$values ('pay'::text, 'orderv2__pay'::text)$$, 'while the V2 run works in V2''s queues');

select * from finish();
rollback;
