-- Cancels a started run in one transaction: the run becomes failed with cancelled_at and
-- `reason` (run:failed, error message "cancelled" or "cancelled: <reason>"); every step that
-- had not ended (created or started) becomes failed with the same error message (step:failed
-- for each, since schema 0014: before, a running step stayed `started` under a cancelled run);
-- every queued, started or waiting task becomes cancelled and its message is archived, and workers
-- running its tasks are told to stop them (_terminate_tasks). Completed and skipped steps keep
-- their outcome. Returns true when this call cancelled the run, false when the run had
-- already finished (nothing changes; a NOTICE says how it ended). An unknown run is an error
-- (P0002). Later results of its tasks change nothing (complete_task / fail_task ignore runs
-- that are not started) unless the run is resumed (resume_run: the failed steps start again,
-- or wait for their dependencies, as after any failure). SECURITY DEFINER: only granted roles
-- may call it.
-- Locks: run FOR UPDATE -> step states (step_slug order) -> tasks -> messages (via _fail_run).
-- Called by: Client::cancel_run, `pgflow run cancel`; SQL users.
create or replace function pgflow.cancel_run(run_id uuid, reason text default null) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_message text := 'cancelled' || coalesce(': ' || cancel_run.reason, '');
begin
  v_run := pgflow._lock_run_for_control(cancel_run.run_id);
  if v_run.status <> 'started' then
    raise notice 'run % already finished (%): nothing to cancel', v_run.run_id,
      case when v_run.cancelled_at is not null then 'cancelled' else v_run.status end;
    return false;
  end if;
  perform 1 from pgflow.step_states ss where ss.run_id = v_run.run_id order by ss.step_slug for update;
  perform pgflow._fail_run(v_run.run_id, v_message);
  update pgflow.runs r set cancelled_at = r.failed_at, cancel_reason = cancel_run.reason
  where r.run_id = v_run.run_id;
  for v_state in
    with ended as (
      update pgflow.step_states ss
      set status = 'failed', failed_at = greatest(now(), ss.started_at), error_message = v_message
      where ss.run_id = v_run.run_id and ss.status in ('created', 'started')
      returning ss.*)
    select * from ended order by step_slug
  loop
    perform pgflow._emit_step_event(v_state.run_id, v_state.flow_slug, v_state.step_slug, v_state.status);
  end loop;
  return true;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.cancel_run(uuid, text) from public;
