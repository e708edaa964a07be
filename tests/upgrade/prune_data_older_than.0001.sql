-- The stock pgflow.prune_data_older_than(interval) of schema version 0001 (queue = flow slug),
-- kept as a fixture: upgrade tests install it on a 0001 database, and the 0002 audit recognises
-- it by the md5 of its body. Superseded by sql/contrib/prune_data_older_than.sql.
create or replace function pgflow.prune_data_older_than(retention_interval interval)
returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  v_cutoff timestamptz := now() - retention_interval;
  v_batch record;
begin
  delete from pgflow.workers w where w.last_heartbeat_at < v_cutoff;
  for v_batch in
    select r.flow_slug, array_agg(t.message_id) as ids
    from pgflow.runs r
    join pgflow.step_tasks t on t.run_id = r.run_id
    where r.status in ('completed', 'failed')
      and coalesce(r.completed_at, r.failed_at) < v_cutoff
      and t.status in ('queued', 'started') and t.message_id is not null
    group by r.flow_slug
  loop
    perform pgmq.delete(v_batch.flow_slug, v_batch.ids);
  end loop;
  delete from pgflow.step_tasks t using pgflow.runs r
  where t.run_id = r.run_id and r.status in ('completed', 'failed')
    and coalesce(r.completed_at, r.failed_at) < v_cutoff;
  delete from pgflow.step_states s using pgflow.runs r
  where s.run_id = r.run_id and r.status in ('completed', 'failed')
    and coalesce(r.completed_at, r.failed_at) < v_cutoff;
  delete from pgflow.runs r
  where r.status in ('completed', 'failed') and coalesce(r.completed_at, r.failed_at) < v_cutoff;
  for v_batch in select f.flow_slug from pgflow.flows f loop
    execute format('delete from pgmq.%I where archived_at < $1',
                   pgmq.format_table_name(v_batch.flow_slug, 'a'))
    using v_cutoff;
  end loop;
end;
$$;
