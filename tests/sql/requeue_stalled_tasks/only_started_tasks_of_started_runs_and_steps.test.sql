-- Stall recovery touches only started tasks whose step and run are started (upstream before
-- 0.15.1 also requeued tasks of failed runs and finished steps).
begin;
select plan(5);

select pgflow.create_flow('s', timeout => 1);
select pgflow.add_step('s', 'a');
select pgflow.add_step('s', 'b');
select run_id as r1 from pgflow.start_flow('s', '{}') \gset
select run_id as r2 from pgflow.start_flow('s', '{}') \gset
select pgflow_tests.ensure_worker('s');
select count(*) from pgflow.start_tasks('s', array(select message_id from pgflow.step_tasks), '11111111-1111-1111-1111-111111111111');
update pgflow.step_tasks set queued_at = now() - interval '1 day', started_at = now() - interval '1 hour';

-- Leftover states: run 1 failed with a started task; run 2's step "a" skipped with a started task.
update pgflow.runs set status = 'failed', failed_at = now() where run_id = :'r1';
update pgflow.step_states set status = 'skipped', skip_reason = 'handler_failed', skipped_at = now(),
                              remaining_tasks = null
where run_id = :'r2' and step_slug = 'a';

select is(pgflow.requeue_stalled_tasks(), 1, 'only one task is requeued');
select is((select status from pgflow.step_tasks where run_id = :'r2' and step_slug = 'b'), 'queued',
          'the task of a started step in a started run');
select is((select count(*) from pgflow.step_tasks where run_id = :'r1' and status = 'started'), 2::bigint,
          'tasks of the failed run are untouched');
select is((select status from pgflow.step_tasks where run_id = :'r2' and step_slug = 'a'), 'started',
          'the task of the skipped step is untouched');
select is((select count(*) from pgflow.step_tasks where permanently_stalled_at is not null), 0::bigint,
          'nothing was marked permanently stalled');

select * from finish();
rollback;
