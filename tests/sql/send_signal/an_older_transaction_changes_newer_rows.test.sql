-- A transaction's now() is when it began, which may be before the rows it changes were written
-- by other sessions: an application's transaction that sends a signal to (or cancels) a run
-- whose wait step a worker started after that transaction began. Before 0027 the task's
-- started_at (and completed_at, the step's and run's end) were set to that older now(), which
-- the CHECK constraints refuse (23514: started_at_is_after_queued_at), aborting the caller's
-- transaction. Now every such timestamp is at least the one it must follow (greatest(), as
-- claim_tasks always did), so the signal is delivered and the run cancelled.
select dblink_connect('other', pgflow_tests.dblink_connstr());
select dblink_exec('other', $setup$ do $do$ begin
  perform pgflow_tests.setup_wait_flow('approval');
  perform pgflow.create_flow('last');
  perform pgflow.add_step('last', 'draft');
  perform pgflow.add_wait_step('last', 'approve', '{"kind": "signal"}', array['draft']);
end $do$ $setup$);

begin;
select plan(7);
select pg_sleep(0.01);  -- (the other session's writes come later than this transaction's now())

-- The other session starts the runs and the wait steps, and commits.
select dblink_exec('other', $work$ do $do$ begin
  perform pgflow.start_run_by_slug('approval', '{}', 'b0000000-0000-0000-0000-000000000001');
  perform pgflow.start_run_by_slug('last', '{}', 'b0000000-0000-0000-0000-000000000002');
  perform pgflow.start_run_by_slug('approval', '{}', 'b0000000-0000-0000-0000-000000000003');
  perform pgflow_tests.complete_step_task(r::uuid, 'draft', 0, '"d"')
  from unnest(array['b0000000-0000-0000-0000-000000000001', 'b0000000-0000-0000-0000-000000000002',
                    'b0000000-0000-0000-0000-000000000003']) r;
end $do$ $work$);
select ok((select bool_and(queued_at > now()) from pgflow.step_tasks where step_slug = 'approve'),
          'the waiting tasks were queued after this transaction began');

select is(pgflow.send_signal('b0000000-0000-0000-0000-000000000001', 'approve', 'ok-1', '"yes"')::text, 'delivered',
          'a signal from the older transaction is delivered');
select results_eq($$select status, started_at >= queued_at and completed_at >= started_at from pgflow.step_tasks
                    where run_id = 'b0000000-0000-0000-0000-000000000001' and step_slug = 'approve'$$,
                  $$values ('completed', true)$$, 'the task started and completed no earlier than it was queued');
select is(pgflow_tests.task_statuses('b0000000-0000-0000-0000-000000000001'),
          array['approve/0: completed', 'draft/0: completed', 'publish/0: queued'], 'and the next step started');

select is(pgflow.send_signal('b0000000-0000-0000-0000-000000000002', 'approve', 'ok-2', '"yes"')::text, 'delivered',
          'a signal that completes its run');
select results_eq($$select status, completed_at >= started_at from pgflow.runs where run_id = 'b0000000-0000-0000-0000-000000000002'$$,
                  $$values ('completed', true)$$, 'the run completed no earlier than it started');

select ok(pgflow.cancel_run('b0000000-0000-0000-0000-000000000003', 'changed my mind'),
          'the older transaction cancels a run started after it began');

select * from finish();
rollback;
select dblink_disconnect('other');
