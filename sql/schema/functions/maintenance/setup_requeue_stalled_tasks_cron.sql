-- Schedules requeue_stalled_tasks() with pg_cron (servers that have it). Without pg_cron, live
-- C++ workers run stall recovery themselves. SECURITY DEFINER: only granted roles may call it.
-- Called by: operators.
create or replace function pgflow.setup_requeue_stalled_tasks_cron(cron_interval text default '15 seconds')
returns text
language plpgsql volatile security definer
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_job bigint;
begin
  if to_regnamespace('cron') is null then
    raise exception 'pg_cron is not installed in this database; C++ workers run stall recovery themselves, or install pg_cron first'
      using errcode = 'feature_not_supported';
  end if;
  begin
    perform cron.unschedule('pgflow_requeue_stalled_tasks');
  exception when others then
    null;  -- not scheduled yet
  end;
  select cron.schedule('pgflow_requeue_stalled_tasks', cron_interval,
                       'select pgflow.requeue_stalled_tasks()') into v_job;
  return format('Scheduled pgflow_requeue_stalled_tasks (every %s, job_id=%s)', cron_interval, v_job);
end;
$$;

-- SECURITY DEFINER: runs as the schema owner, so nobody calls it unless granted
-- (sql/contrib/grants.sql grants the worker and starter roles what they need).
revoke execute on function pgflow.setup_requeue_stalled_tasks_cron(text) from public;
