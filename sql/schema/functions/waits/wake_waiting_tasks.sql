-- The timers of wait steps (since 0021): ends the waiting tasks whose wake_at has passed - a
-- sleep completes, a wait for a signal times out (_settle_waits) - for the `max_runs` runs
-- whose deadlines passed first, locked in run_id order (as _lock_runs does); a run another
-- transaction holds is skipped, left for the next call. Returns how many tasks it ended.
-- A run whose settling raises (say, the step it would start has lost its queue) is settled in a
-- subtransaction, so only its own changes are undone (since 0028; before, the error undid the
-- whole batch, and as that run stayed due, every later call failed too: one broken run stopped
-- every timer of the database). Its due tasks are tried again a minute later (their wake_at
-- moves; a signal still ends them meanwhile), with a WARNING naming the run and the error.
-- The maintenance loop of each worker whose flow has wait steps calls it every heartbeat
-- interval, and again at once while a call ended a full batch (so a timer fires at most about
-- one heartbeat interval late while such a worker runs, a burst included; docs/waiting.md);
-- with pg_cron, a schedule can call it too.
-- Locks: runs FOR UPDATE SKIP LOCKED, one at a time -> what _settle_waits takes.
-- SECURITY DEFINER: only granted roles may call it (sql/contrib/grants.sql: pgflow_worker).
-- Called by: workers (maintenance); pg_cron; SQL users.
create or replace function pgflow.wake_waiting_tasks(max_runs int default 100) returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_run_id uuid;
  v_ended int := 0;
  v_state text;
  v_message text;
begin
  for v_run_id in
    select d.run_id
    from (select t.run_id, min(t.wake_at) as due
          from pgflow.step_tasks t
          where t.status = 'waiting' and t.wake_at is not null and t.wake_at <= now()
          group by t.run_id
          order by 2, 1
          limit greatest(coalesce(max_runs, 100), 1)) d
    order by d.run_id
  loop
    perform 1 from pgflow.runs r where r.run_id = v_run_id and r.status = 'started'
    for update skip locked;
    if found then
      begin
        v_ended := v_ended + pgflow._settle_waits(v_run_id);
      exception when others then
        get stacked diagnostics v_state = returned_sqlstate, v_message = message_text;
        update pgflow.step_tasks t set wake_at = clock_timestamp() + interval '1 minute'
        where t.run_id = v_run_id and t.status = 'waiting' and t.wake_at <= clock_timestamp();
        raise warning 'pgflow: the wait timers of run % could not end its tasks (% %); trying again in a minute',
          v_run_id, v_state, v_message;
      end;
    end if;
  end loop;
  return v_ended;
end;
$$;

revoke execute on function pgflow.wake_waiting_tasks(int) from public;
