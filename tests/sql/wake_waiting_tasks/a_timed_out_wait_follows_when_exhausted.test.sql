-- A wait for a signal that times out fails its task at once - a wait is not retried, whatever
-- the step's max attempts - and the step's when_exhausted decides: fail the run (the default),
-- skip the step (its dependents run without it), or skip it and everything downstream.
begin;
select plan(10);

create function pg_temp.start_waiting(p_flow text, p_when_exhausted text) returns uuid language plpgsql as $$
declare v_run uuid;
begin
  perform pgflow_tests.setup_wait_flow(p_flow, '{"kind": "signal", "timeout": 60}', when_exhausted => p_when_exhausted);
  select run_id into v_run from pgflow.start_flow(p_flow, '{}');
  perform pgflow_tests.complete_step_task(v_run, 'draft', 0, '"d"');
  return v_run;
end $$;
select pg_temp.start_waiting('fails', 'fail') as fails, pg_temp.start_waiting('skips', 'skip') as skips,
       pg_temp.start_waiting('cascades', 'skip-cascade') as cascades \gset

select ok((select wake_at between now() + interval '59 s' and now() + interval '61 s'
           from pgflow.step_tasks where run_id = :'fails' and step_slug = 'approve'),
          'a waiting task''s deadline is its timeout from when it started waiting');
select is(pgflow.wake_waiting_tasks(), 0, 'before the deadline the timers end nothing');
update pgflow.step_tasks set wake_at = now() - interval '1 s' where step_slug = 'approve';
select is(pgflow.wake_waiting_tasks(), 3, 'after it, they end the three waits');

select is(pgflow_tests.task_statuses(:'fails'), array['approve/0: failed', 'draft/0: completed'],
          'when_exhausted fail: the task failed, no retry queued');
select is((select status || ': ' || error_message from pgflow.step_states where run_id = :'fails' and step_slug = 'approve'),
          'failed: Step "approve" waited 60 s for a signal and timed out', 'the step failed, saying why');
select is((select status from pgflow.runs where run_id = :'fails'), 'failed', 'and the run failed');

select is((select status || ' ' || skip_reason from pgflow.step_states where run_id = :'skips' and step_slug = 'approve'),
          'skipped handler_failed', 'when_exhausted skip: the step is skipped');
select is(pgflow_tests.task_statuses(:'skips'), array['approve/0: failed', 'draft/0: completed', 'publish/0: queued'],
          'and its dependent runs without it');

select is((select array_agg(step_slug || ' ' || status order by step_slug) from pgflow.step_states where run_id = :'cascades'),
          array['approve skipped', 'draft completed', 'publish skipped'], 'when_exhausted skip-cascade: everything downstream is skipped');
select is((select status from pgflow.runs where run_id = :'cascades'), 'completed', 'and the run completes');

select * from finish();
rollback;
