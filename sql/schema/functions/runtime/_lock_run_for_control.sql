-- The run cancel_run, retry_run, resume_run, set_run_priority or send_signal acts on, locked
-- FOR UPDATE (FOR SHARE when `p_for_share`: retry_run only copies it); an unknown run is
-- P0002. With `p_verb` ('retried', 'resumed'), a run that has not failed is refused (55000)
-- naming its status.
-- Locks: the run (lock order position 2); the wait is bounded (_bound_lock_waits) and a
-- timeout names the holder.
-- Called by: cancel_run, retry_run, resume_run, set_run_priority, send_signal.
create or replace function pgflow._lock_run_for_control(p_run_id uuid, p_verb text default null,
                                                        p_for_share boolean default false)
returns pgflow.runs
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_since timestamptz := clock_timestamp();
  v_restore text;
  v_run pgflow.runs;
begin
  begin
    v_restore := pgflow._bound_lock_waits();
    if p_for_share then
      select * into v_run from pgflow.runs r where r.run_id = p_run_id for share;
    else
      select * into v_run from pgflow.runs r where r.run_id = p_run_id for update;
    end if;
    perform set_config('lock_timeout', v_restore, true);
  exception when lock_not_available then
    perform pgflow._raise_lock_timeout(format('run "%s"', p_run_id),
                                       (select r.xmax from pgflow.runs r where r.run_id = p_run_id),
                                       'pgflow.runs', v_since);
  end;
  if v_run.run_id is null then
    raise exception 'Run "%" does not exist', p_run_id using errcode = 'no_data_found';
  end if;
  if p_verb is not null and v_run.status <> 'failed' then
    raise exception 'Run "%" is %: only a failed or cancelled run can be %', v_run.run_id, v_run.status, p_verb
      using errcode = 'object_not_in_prerequisite_state',
            hint = case when v_run.status = 'started'
                          then 'Cancel it first: Client::cancel_run, `pgflow run cancel RUN_ID` or pgflow.cancel_run.'
                        else 'Start a new run if it should run again: Client::start_flow, `pgflow start FLOW --input JSON` or pgflow.start_flow.' end;
  end if;
  return v_run;
end;
$$;
