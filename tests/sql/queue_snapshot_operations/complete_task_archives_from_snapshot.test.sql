-- complete_task archives the task's message from the task's queue snapshot, not from the
-- flow's queue; so does a late callback (the run already ended).
begin;
\i _move_to_alt.sql
select plan(7);

select pgflow.create_flow('f', timeout => 5);
select pgflow.add_step('f', 'a');
select pgflow.add_step('f', 'b');
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'a');
select pg_temp.move_to_alt('a') as a_msg \gset

select is((select status from pgflow.complete_task(:'run', 'a', 0, '{"ok": true}')), 'completed', 'a completes');
select results_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, array[:a_msg::bigint],
                  'its message was archived from alt');
select is_empty($$select pgflow_tests.queue_msg_ids('alt')$$, 'alt has no active message left');
select is((pgflow_tests.queue_counts('f')).archived, 0::bigint, 'nothing was archived from the flow''s queue');
select is((pgflow_tests.queue_counts('f')).active, 1::bigint, 'b''s message is still in the flow''s queue');

-- Late callback: the run ends (b fails for good), then a redelivered copy of b's message in
-- alt is reported complete.
update pgflow.flows set opt_max_attempts = 1;
select pgflow_tests.fail_step_task(:'run', 'b');
select is((select status from pgflow.runs), 'failed', '(the run failed)');
select s.id as late_msg from pgmq.send('alt', '{"redelivered": true}') s(id) \gset
update pgflow.step_tasks set queue_name = 'alt', message_id = :late_msg where step_slug = 'b';
select pgflow.complete_task(:'run', 'b', 0, '{}');
select results_eq($$select pgflow_tests.queue_msg_ids('alt', true)$$, array[:a_msg::bigint, :late_msg::bigint],
                  'the late callback archived its message from alt');

select * from finish();
rollback;
