-- Cancels a started run in one transaction: the run becomes failed with cancelled_at and
-- `reason` (run:failed, error message "cancelled" or "cancelled: <reason>"), every queued or
-- started task becomes cancelled and its message is archived, and workers running its tasks are
-- told to stop them (_terminate_tasks). Step states stay as they were, as for any failed run.
-- Returns true when this call cancelled the run, false when the run had already finished
-- (nothing changes; a NOTICE says how it ended). An unknown run is an error (P0002). Later
-- results of its tasks change nothing (complete_task / fail_task ignore runs that are not
-- started) unless the run is resumed (resume_run). SECURITY DEFINER: only granted roles may call it.
-- Locks: run FOR UPDATE -> tasks -> messages (via _fail_run).
-- Called by: Client::cancel_run, `pgflow run cancel`; SQL users.
create or replace function pgflow.cancel_run(run_id uuid, reason text default null) returns boolean
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  v_run := pgflow._lock_run_for_control(cancel_run.run_id);
  if v_run.status <> 'started' then
    raise notice 'run % already finished (%): nothing to cancel', v_run.run_id,
      case when v_run.cancelled_at is not null then 'cancelled' else v_run.status end;
    return false;
  end if;
  perform pgflow._fail_run(v_run.run_id, 'cancelled' || coalesce(': ' || cancel_run.reason, ''));
  update pgflow.runs r set cancelled_at = r.failed_at, cancel_reason = cancel_run.reason
  where r.run_id = v_run.run_id;
  return true;
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the starter role what it needs).
revoke execute on function pgflow.cancel_run(uuid, text) from public;
