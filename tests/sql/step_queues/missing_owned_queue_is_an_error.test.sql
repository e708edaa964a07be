-- Verification checks every queue on a step-queued flow's persisted route: an owned queue that
-- has gone missing is an error naming the queue, the step and the flow, and is not recreated
-- (a new queue would restart message ids under existing task snapshots); case-alias meta rows
-- of an owned queue are refused too.
begin;
select plan(5);

select pgflow_tests.compile_step_flow('keeper', jsonb_build_array(
  pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])));
select pgmq.drop_queue('keeper__b');

select throws_ok($$select pgflow_tests.compile_step_flow('keeper', jsonb_build_array(
                     pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])))$$,
                 '42704',
                 'PGMQ queue "keeper__b" of step "b" of flow "keeper" is missing although the step routes to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or deploy the flow under a new slug',
                 'a missing owned queue fails verification');
select ok(not exists (select 1 from pgmq.meta where queue_name = 'keeper__b'), 'it was not recreated');

select pgmq.create('keeper__b');  -- an operator restores it deliberately
select is(pgflow_tests.compile_step_flow('keeper', jsonb_build_array(
            pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])))->>'status',
          'verified', 'once restored, the flow verifies');

insert into pgmq.meta (queue_name, is_partitioned, is_unlogged, created_at)
  values ('Keeper__A', false, false, now());
select throws_ok($$select pgflow_tests.compile_step_flow('keeper', jsonb_build_array(
                     pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])))$$,
                 '21000', 'PGMQ queue "keeper__a" is ambiguous: pgmq.meta has 2 rows for the same tables (Keeper__A, keeper__a); keep one', 'a case alias of an owned queue fails verification');
select is((select count(*) from pgflow.steps where flow_slug = 'keeper'), 2::bigint, 'the definition is unchanged');

select * from finish();
rollback;
