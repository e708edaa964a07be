-- pgflow.prune_data_older_than(retention_interval interval): deletes finished history.
--
-- Optional and installed by hand (never by migrations):
--     psql "$DATABASE_URL" -f share/pgflow/sql/contrib/prune_data_older_than.sql
-- Running this file again replaces an installed copy (CREATE OR REPLACE), which is also how a
-- copy installed before schema version 0002 is upgraded (the 0002 audit says when that is
-- needed). If you customized your copy, merge by hand instead.
--
-- It needs schema version 0013 or later (a copy installed earlier keeps working as it is).
--
-- With cutoff = now() - retention_interval it deletes:
--   * workers whose last heartbeat is older than the cutoff and than the liveness window of
--     pgflow.is_live_worker (30 s): a worker that beat within the last 30 seconds is never
--     deleted, whatever the retention (a deprecated or stopping worker that still beats too),
--     since a deleted worker's running tasks lose last_worker_id and the worker can no longer
--     report. Before the copy shipped with schema 0027, `pgflow prune --older-than 1s`
--     unregistered a running fleet; run this file again to install the fix;
--   * runs completed or failed before the cutoff (pgflow.run_ended_before, the rule `pgflow
--     prune --dry-run` counts with), with their step states and tasks, and any
--     still-active queue message of those tasks (from each task's own queue);
--   * archived messages older than the cutoff from every queue on a persisted flow route
--     (pgflow.steps.queue_name).
-- Lock order as in the core: runs, then tasks, then queue rows. Schedule it with pg_cron, e.g.
--     select cron.schedule('pgflow_prune', '0 3 * * *',
--                          $$select pgflow.prune_data_older_than('14 days')$$);
create or replace function pgflow.prune_data_older_than(retention_interval interval)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
declare
  v_cutoff timestamptz := now() - retention_interval;
  v_batch record;
begin
  -- A worker's claim fence (schema 0030) before its row, in a claim's order (fence, then the
  -- worker row its tasks' foreign key locks): the cascade would take them the other way round.
  if to_regclass('pgflow.claim_fences') is not null then
    execute $q$delete from pgflow.claim_fences f using pgflow.workers w
               where f.worker_id = w.worker_id and w.last_heartbeat_at < $1
                 and w.last_heartbeat_at < now() - interval '30 seconds'$q$ using v_cutoff;
  end if;
  delete from pgflow.workers w
  where w.last_heartbeat_at < v_cutoff and w.last_heartbeat_at < now() - interval '30 seconds';

  perform 1 from pgflow.runs r
  where pgflow.run_ended_before(r, v_cutoff)
  order by r.run_id
  for update;

  for v_batch in
    with deleted as (
      delete from pgflow.step_tasks t using pgflow.runs r
      where t.run_id = r.run_id and pgflow.run_ended_before(r, v_cutoff)
      returning t.queue_name, t.message_id, t.status)
    select d.queue_name, array_agg(d.message_id order by d.message_id) as ids
    from deleted d
    where d.status in ('queued', 'started') and d.message_id is not null
    group by d.queue_name
  loop
    perform pgmq.delete(v_batch.queue_name, v_batch.ids);
  end loop;

  delete from pgflow.step_states s using pgflow.runs r
  where s.run_id = r.run_id and pgflow.run_ended_before(r, v_cutoff);
  delete from pgflow.runs r where pgflow.run_ended_before(r, v_cutoff);

  for v_batch in select distinct s.queue_name from pgflow.steps s order by s.queue_name loop
    execute format('delete from pgmq.%I where archived_at < $1',
                   pgmq.format_table_name(v_batch.queue_name, 'a'))
    using v_cutoff;
  end loop;
end;
$$;
