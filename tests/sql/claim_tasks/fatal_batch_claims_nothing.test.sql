-- Outcome "fatal": a batch with any message that looks like pgflow work but has no task for
-- (queue, message id) — or whose task belongs to another flow — claims NOTHING, defers and
-- archives nothing, mutates no task, makes every message of the batch visible again, pauses
-- the worker's function (the reason names the queue and the message ids, never a body) and
-- returns the outcomes instead of raising: "fatal" for the culprits, "reset" for the others.
begin;
select plan(13);

select pgflow.create_flow('f', timeout => 20);
select pgflow.add_step('f', 'claimable');
select pgflow.add_step('f', 'running');
select pgflow.add_step('f', 'done');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '{}') \gset
select pgflow_tests.start_task(:'run', 'running');
select pgflow_tests.complete_step_task(:'run', 'done');
insert into pgmq.q_f (msg_id, read_ct, enqueued_at, vt, message, headers) overriding system value
  select msg_id, read_ct, enqueued_at, clock_timestamp(), message, headers from pgmq.a_f;  -- "done" redelivered
delete from pgmq.a_f;
select s.id as orphan from pgmq.send('f', jsonb_build_object('flow_slug', 'f', 'run_id', gen_random_uuid(),
  'step_slug', 'claimable', 'task_index', 0, 'payload', 'SECRET-BODY')) s(id) \gset
select s.id as foreign_msg from pgmq.send('f', '{"note": "SECRET-TOO"}') s(id) \gset

-- The worker read the whole batch (hidden for 30 s); the running task's message had become
-- visible (a benign redelivery).
select pgflow_tests.reset_message_visibility('f');
create temp table batch as select msg_id from pgmq.read('f', 30, 100);
create temp table tasks_before as select * from pgflow.step_tasks;

create temp table outcomes (like pgflow.claim_record);
select lives_ok($$insert into outcomes select * from pgflow.claim_tasks('f', 'f', array(select msg_id from batch), '11111111-1111-1111-1111-111111111111')$$,
                'claim_tasks returns instead of raising');
select is((select count(*) from batch), 5::bigint, '(the batch has five messages)');
select results_eq($$select msg_id, outcome from outcomes order by msg_id$$,
                  $$select msg_id, case when msg_id = $$ || :orphan || $$ then 'fatal' else 'reset' end from batch order by msg_id$$,
                  'the orphan is fatal, every other message is reset');
select is((select reason from outcomes where outcome = 'fatal'), 'it looks like pgflow work but no task has this (queue, message id)',
          'the fatal outcome says why');
select is_empty($$select * from pgflow.step_tasks except select * from tasks_before$$, 'no task was mutated (nothing claimed)');
select is((select count(*) from pgflow.step_tasks where status = 'queued' and step_slug = 'claimable'), 1::bigint,
          'the claimable task is still queued');
select is((select count(*) from pgmq.a_f), 0::bigint, 'nothing was archived (not the finished task''s, not the foreign message)');
select ok((select bool_and(q.vt <= clock_timestamp()) and count(*) = 5 from pgmq.q_f q join batch b using (msg_id)),
          'every message of the batch is visible again (the running task''s too: nothing was deferred)');
select ok((select paused_at is not null from pgflow.worker_functions where function_name = 'fn'), 'the worker function is paused');
select ok((select pause_reason like '%queue "f"%' and pause_reason like '%' || :orphan || '%'
           from pgflow.worker_functions where function_name = 'fn'),
          'the pause reason names the queue and the message id');
select ok((select pause_reason not like '%SECRET%' and pause_reason not like '%payload%' from pgflow.worker_functions),
          'and no message body');

-- A message whose task belongs to another flow (wrong route) is fatal too.
select pgflow.resume_worker_function('fn');
select pgmq.delete('f', :orphan);
select pgflow.create_flow('g');
select pgflow.add_step('g', 'x');
select run_id as g_run from pgflow.start_flow('g', '{}') \gset
select s.id as stray from pgmq.send('f', '{"flow_slug": "g"}') s(id) \gset
update pgflow.step_tasks set queue_name = 'f', message_id = :stray where flow_slug = 'g';
select results_eq(format($$select msg_id, outcome, reason from pgflow.claim_tasks('f', 'f', array[%s, %s]::bigint[], '11111111-1111-1111-1111-111111111111') order by 1$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'claimable'), :stray),
                  format($$values (%s::bigint, 'reset'::text, null::text), (%s, 'fatal', 'its task belongs to flow "g", not to this worker''s flow')$$,
                         (select message_id from pgflow.step_tasks where step_slug = 'claimable'), :stray),
                  'a task of another flow in this queue is fatal');
select is((select status from pgflow.step_tasks where step_slug = 'claimable'), 'queued', 'and again nothing was claimed');

select * from finish();
rollback;
