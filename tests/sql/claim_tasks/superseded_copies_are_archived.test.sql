-- A message whose task has another message now - the run was cancelled while a reader held this
-- one locked (so it was not archived), then resumed (the task got a new message) - is a
-- superseded copy: since 0027 the claim archives it ("stale") and claims the rest, instead of
-- calling it fatal and pausing the worker function. A body naming no task stays fatal
-- (fatal_batch_claims_nothing).
begin;
select plan(5);
select pgflow.create_flow('f', timeout => 20);
select pgflow.add_step('f', 's');
select pgflow.register_worker('11111111-1111-1111-1111-111111111111', 'fn', 'f', 'f', pgflow.worker_protocol());
select run_id as run from pgflow.start_flow('f', '{}') \gset
select message_id as old_msg from pgflow.step_tasks \gset

-- The cancellation archives the message (here: no reader held it); put it back, as a reader's
-- lock would have kept it, then resume: the task gets a new message.
select pgflow.cancel_run(:'run', 'pause');
insert into pgmq.q_f (msg_id, read_ct, enqueued_at, vt, message, headers) overriding system value
  select msg_id, read_ct, enqueued_at, clock_timestamp(), message, headers from pgmq.a_f;
delete from pgmq.a_f;
select (pgflow.resume_run(:'run')).status;
select message_id as new_msg from pgflow.step_tasks \gset
select isnt(:new_msg::bigint, :old_msg::bigint, 'the resumed task has a new message');

select results_eq(
  format($$select msg_id, outcome, reason from pgflow.claim_tasks('f', 'f', array[%s, %s]::bigint[],
                                                                 '11111111-1111-1111-1111-111111111111') order by msg_id$$,
         :old_msg, :new_msg),
  format($$values (%s::bigint, 'archived', 'stale: its task has message %s now (a superseded copy)'),
                  (%s::bigint, 'claimed', null)$$, :old_msg, :new_msg, :new_msg),
  'the old copy is archived as stale, the task is claimed through its new message');
select is((select msg_id from pgmq.a_f), :old_msg::bigint, 'the old copy is in the archive');
select is((select status from pgflow.step_tasks), 'started', 'the task runs once');
select is((select paused_at from pgflow.worker_functions where function_name = 'fn'), null::timestamptz,
          'the worker function is not paused');

select * from finish();
rollback;
