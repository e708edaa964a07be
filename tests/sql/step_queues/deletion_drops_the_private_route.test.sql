-- Deleting a step-queued flow drops exactly its private route queues (with their archives),
-- after validating them; the default queue name lower(flow_slug) is not the flow's in queue
-- mode step, so a queue of that name (someone else's) stays. An uncertain queue fails the
-- deletion and changes nothing.
begin;
select plan(6);

select pgflow_tests.compile_step_flow('gone', jsonb_build_array(
  pgflow_tests.step_shape('a'), pgflow_tests.step_shape('b', array['a'])));
select pgflow.start_flow('gone', '{}');
select pgmq.create('gone');  -- an application's own queue that happens to have the flow's name

select pgmq.drop_queue('gone__b');
select pgmq.create('gone__b');
insert into pgmq.meta (queue_name, is_partitioned, is_unlogged, created_at)
  values ('Gone__B', false, false, now());
select throws_ok($$select pgflow.delete_flow_and_data('gone')$$, '21000', 'PGMQ queue "gone__b" is ambiguous: pgmq.meta has 2 rows for the same tables (Gone__B, gone__b); keep one',
                 'an ambiguous queue on the route fails the deletion');
select is((select count(*) from pgflow.runs) + (select count(*) from pgflow.flows), 2::bigint,
          'and nothing was deleted');
delete from pgmq.meta where queue_name = 'Gone__B';

select lives_ok($$select pgflow.delete_flow_and_data('gone')$$, 'a valid route is deleted');
select is(array(select queue_name::text from pgmq.meta order by 1), array['gone'],
          'both step queues are dropped; the queue named like the flow is not the flow''s and stays');
select ok(to_regclass('pgmq.a_gone__a') is null and to_regclass('pgmq.a_gone__b') is null, 'with their archives');
select is((select count(*) from pgflow.flows) + (select count(*) from pgflow.steps)
          + (select count(*) from pgflow.runs), 0::bigint, 'the definition and its runs are gone');

select * from finish();
rollback;
