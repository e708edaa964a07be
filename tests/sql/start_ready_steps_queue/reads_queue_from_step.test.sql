-- start_ready_steps reads each ready step's steps.queue_name (not the flow slug) and sends
-- every step's batch to its own queue; the task snapshot keeps the queue it was sent to even if
-- the step's route changes later. It performs no queue DDL: a route to a missing queue fails.
begin;
select plan(7);

select pgflow.create_flow('f', timeout => 5);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b', step_type => 'map');
select pgflow.add_step('f', 'c', array['a']);
select pgmq.create('alt');
update pgflow.steps set queue_name = 'alt' where step_slug = 'b';  -- a route the API cannot express yet
select run_id as run from pgflow.start_flow('f', '[1, 2]') \gset

select results_eq($$select step_slug, task_index, queue_name from pgflow.step_tasks order by 1, 2$$,
                  $$values ('a'::text, 0, 'f'::text), ('b', 0, 'alt'), ('b', 1, 'alt')$$,
                  'each task snapshots its step''s queue');
select set_eq($$select msg_id from pgmq.q_alt$$, $$select message_id from pgflow.step_tasks where step_slug = 'b'$$,
              'b''s messages went to alt');
select set_eq($$select msg_id from pgmq.q_f$$, $$select message_id from pgflow.step_tasks where step_slug = 'a'$$,
              'a''s message went to f');

update pgflow.steps set queue_name = 'f' where step_slug = 'b';
select is_empty($$select 1 from pgflow.step_tasks where step_slug = 'b' and queue_name <> 'alt'$$,
                'the snapshot does not follow a later route change');

update pgflow.steps set queue_name = 'nowhere' where step_slug = 'c';
select throws_ok(format($$select pgflow_tests.complete_step_task(%L, 'a')$$, :'run'), '42P01', 'relation "pgmq.q_nowhere" does not exist',
                 'a step routed to a missing queue cannot start (pgmq.send fails)');
select is((select count(*) from pgmq.meta where queue_name = 'nowhere'), 0::bigint, 'no queue was created for it');
select hasnt_table('pgmq', 'q_nowhere', '(no table either)');

select * from finish();
rollback;
