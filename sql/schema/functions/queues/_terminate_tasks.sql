-- Moves every queued, started or waiting task of the run (or of the given steps) to a terminal status
-- (`skipped` or `cancelled`) and archives their messages, one batch per task queue snapshot
-- (_archive_messages, skipping messages a reader holds: its claim archives them): task rows
-- first, then queue rows. The queues of tasks that were started
-- (a worker may be running them) are told to stop them (_announce_stopped_tasks).
-- Locks: the caller holds the run.
-- Called by: _fail_run (and so cancel_run), _cascade_force_skip_steps, _fail_task.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queues text[];
  v_ids bigint[];
  v_queue text;
begin
  -- (Read before the update: the update's RETURNING sees only the new status.)
  for v_queue in
    select distinct t.queue_name from pgflow.step_tasks t
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status = 'started'
    order by 1
  loop
    perform pgflow._announce_stopped_tasks(v_queue);
  end loop;
  with terminated as (
    update pgflow.step_tasks t
    set status = p_status
    where t.run_id = p_run_id
      and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
      and t.status in ('queued', 'started', 'waiting')
    returning t.queue_name, t.message_id)
  select array_agg(x.queue_name), array_agg(x.message_id)
  into v_queues, v_ids
  from terminated x;
  perform pgflow._archive_messages(v_queues, v_ids);
end;
$$;
