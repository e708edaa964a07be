-- Ends the due waiting tasks of these runs (wake_waiting_tasks's batch, or one run of it): each
-- started run not held by another transaction is locked (FOR UPDATE SKIP LOCKED, in the order
-- given: run_id order) and settled (_settle_waits); its timer_retries row, if any, goes (its
-- timers went through). Returns how many tasks it ended.
-- Locks: runs, one at a time -> what _settle_waits takes.
-- Called by: wake_waiting_tasks.
create or replace function pgflow._settle_due_runs(p_runs uuid[]) returns int
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_run_id uuid;
  v_ended int := 0;
begin
  foreach v_run_id in array p_runs loop
    perform 1 from pgflow.runs r where r.run_id = v_run_id and r.status = 'started'
    for update skip locked;
    if found then
      v_ended := v_ended + pgflow._settle_waits(v_run_id);
      delete from pgflow.timer_retries x where x.run_id = v_run_id;
    end if;
  end loop;
  return v_ended;
end;
$$;
