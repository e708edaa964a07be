-- Since 0027 stall recovery admits the slots its own pass frees (an exhausted stall ending an
-- admitted task of a limited flow) in its sweep, and clears its transaction's record, so its
-- commit admits nothing and never waits for a gate row (before, that commit waited for the
-- freed flow's gate while the sweep held later gates: a deadlock with a commit of both flows).
-- The setup commits (this file runs in its own database), so the pass below starts clean.
select pgflow.ensure_flow_compiled('lim', jsonb_build_object('steps', jsonb_build_array(
         pgflow_tests.step_shape('work', options => '{"maxAttempts": 1, "timeout": 60}'))),
       pgflow.worker_protocol(), 'flow', null, null, '{"steps": {"work": {"concurrencyLimit": 1}}}')->>'status';
select pgflow.register_worker('b0000000-0000-0000-0000-000000000001', 'lim-worker', 'lim', 'lim', pgflow.worker_protocol());
select pgflow.start_run_by_slug('lim', '{}', 'c0000000-0000-0000-0000-000000000001');
select pgflow.start_run_by_slug('lim', '{}', 'c0000000-0000-0000-0000-000000000002');
select count(*) from pgflow.claim_tasks('lim', 'lim', array(select message_id from pgflow.step_tasks where message_id is not null),
                                        'b0000000-0000-0000-0000-000000000001');
-- Run 1's task stalled long ago, with no attempt left: the pass fails it (exhausted).
update pgflow.step_tasks set queued_at = now() - interval '1 hour', started_at = now() - interval '1 hour'
where run_id = 'c0000000-0000-0000-0000-000000000001';

begin;
select plan(4);
select is((select string_agg(run_id::text || ' ' || gate || ' ' || status, ', ' order by run_id) from pgflow.step_tasks),
          'c0000000-0000-0000-0000-000000000001 admitted started, c0000000-0000-0000-0000-000000000002 held queued',
          'one slot: run 1''s task holds it, run 2''s waits');
select is(pgflow.requeue_stalled_tasks(), 0, 'the pass requeues nothing: the stalled task is exhausted');
select is((select string_agg(run_id::text || ' ' || gate || ' ' || status, ', ' order by run_id) from pgflow.step_tasks),
          'c0000000-0000-0000-0000-000000000001 admitted failed, c0000000-0000-0000-0000-000000000002 admitted queued',
          'it failed run 1''s task and admitted run 2''s into the freed slot itself, before its commit');
select is(coalesce(pgflow._transaction_record('pgflow.gated_flows'), '') || coalesce(pgflow._transaction_record('pgflow.gated_keys'), ''),
          '', 'and left its commit nothing to admit');
select * from finish();
commit;
