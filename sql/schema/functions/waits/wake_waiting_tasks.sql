-- The timers of wait steps (since 0021): ends the waiting tasks whose wake_at has passed - a
-- sleep completes, a wait for a signal times out (_settle_waits) - for the `max_runs` runs
-- whose deadlines passed first, locked in run_id order (as _lock_runs does); a run another
-- transaction holds is skipped, left for the next call. Returns how many tasks it ended.
-- A run whose timers raise holds back no other (since 0028; before, the error undid the whole
-- call, and as that run stayed due, every later call failed too: one broken run stopped every
-- timer of the database). The batch runs in one subtransaction, with the admissions its runs
-- recorded made inside it, waiting for gate rows in byte order as its commit would
-- (_admit_recorded_flows: a limited step's held tasks get their messages there, which is where
-- a lost queue raises; at commit it would fail the call). If it raises, each run is locked and
-- tried again in a subtransaction of its own, admitting without waiting for a gate (several
-- runs' admissions in turn must not wait in an order of their own) - the common path uses one
-- subtransaction id, not one per run: more than 64 in a transaction slow every other session's
-- snapshots. A run that raises there is undone alone (its lock, taken outside, stays) and set
-- aside in timer_retries for a minute, with a WARNING naming it and the error; its wake_at
-- stays (a sleep's output names it). A later call whose try goes through deletes the row (a row
-- left behind by a run that ended otherwise, by a signal or a cancellation, is pruned with the
-- run; status --metrics counts only started runs with a due wait). A signal sent meanwhile
-- moves the run on the same way, so it meets the same error until the cause is repaired.
-- Errors another try may not meet (SQLSTATE class 40: deadlock, serialization; 55P03: lock
-- timeout) end the call instead, as before: the next call tries again.
-- An SQL user who calls it inside a larger transaction that changes limited flows too has
-- those flows admitted by the call, with its own, in one pass in byte order (its commit then
-- admits only what it records afterwards, in a pass of its own, which can deadlock with a
-- commit of both flows: 40P01, retried like any deadlock; workers and pg_cron call it alone).
-- The maintenance loop of each worker whose flow has wait steps calls it every heartbeat
-- interval, and again at once while a call ends any task (so a timer fires at most about one
-- heartbeat interval late while such a worker runs, a burst included; docs/waiting.md); with
-- pg_cron, a schedule can call it too.
-- Locks: runs FOR UPDATE SKIP LOCKED, one at a time -> what _settle_waits takes -> gate rows
-- (_admit_recorded_flows).
-- SECURITY DEFINER: only granted roles may call it (sql/contrib/grants.sql: pgflow_worker).
-- Called by: workers (maintenance); pg_cron; SQL users.
create or replace function pgflow.wake_waiting_tasks(max_runs int default 100) returns int
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
declare
  v_runs uuid[];
  v_run_id uuid;
  v_ended int := 0;
  v_run_ended int;  -- (a variable keeps its value when the block it was set in is undone)
  v_state text;
  v_message text;
begin
  select array_agg(d.run_id order by d.run_id) into v_runs
  from (select t.run_id, min(t.wake_at) as due
        from pgflow.step_tasks t
        where t.status = 'waiting' and t.wake_at is not null and t.wake_at <= now()
          and not exists (select 1 from pgflow.timer_retries x
                          where x.run_id = t.run_id and x.retry_at > now())
        group by t.run_id
        order by 2, 1
        limit greatest(coalesce(max_runs, 100), 1)) d;
  if v_runs is null then
    return 0;
  end if;
  begin
    v_run_ended := pgflow._settle_due_runs(v_runs);
    perform pgflow._admit_recorded_flows(true);
    v_ended := v_run_ended;
  exception
    -- (transaction_rollback is SQLSTATE class 40: deadlocks, serialization failures.)
    when transaction_rollback or lock_not_available then
      raise;
    when others then
      -- Some run raised, and the batch was undone: again, a run at a time.
      foreach v_run_id in array v_runs loop
        perform 1 from pgflow.runs r where r.run_id = v_run_id and r.status = 'started'
        for update skip locked;
        continue when not found;
        begin
          v_run_ended := pgflow._settle_due_runs(array[v_run_id]);
          perform pgflow._admit_recorded_flows(false);
          v_ended := v_ended + v_run_ended;
        exception
          when transaction_rollback or lock_not_available then
            raise;
          when others then
            get stacked diagnostics v_state = returned_sqlstate, v_message = message_text;
            insert into pgflow.timer_retries as x (run_id, retry_at, last_error)
            values (v_run_id, now() + interval '1 minute', v_state || ' ' || v_message)
            on conflict (run_id) do update
              set retry_at = excluded.retry_at, tries = x.tries + 1, last_error = excluded.last_error;
            raise warning 'pgflow: the wait timers of run % could not end its tasks (% %); trying again in a minute',
              v_run_id, v_state, v_message;
        end;
      end loop;
  end;
  return v_ended;
end;
$$;

revoke execute on function pgflow.wake_waiting_tasks(int) from public;
