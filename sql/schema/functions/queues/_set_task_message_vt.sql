-- Sets the visibility of one task's message to now + p_delay seconds (retry backoff, stall
-- recovery, a released claim) in the task's queue snapshot; a delay of 0 announces the work.
-- A message a reader holds locked is left alone (SKIP LOCKED, as in _archive_messages): that
-- reader's claim, waiting for the run the caller holds, finds the task queued once the caller
-- commits and claims it at once (a retry's backoff is then skipped: the task runs again
-- sooner, never later or twice).
-- Locks: the caller holds the task's run; the queue row last, never waited for.
-- Called by: _fail_task, requeue_stalled_tasks, release_claim.
create or replace function pgflow._set_task_message_vt(p_run_id uuid, p_step_slug text,
                                                       p_task_index int, p_delay int)
returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_msg bigint;
  v_updated int;
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is null then
    return;
  end if;
  -- pgmq.set_vt's update (PGMQ 1.5's columns), of the row only if nobody holds it.
  execute format($sql$
    update pgmq.%1$I q set vt = clock_timestamp() + make_interval(secs => $2)
    where q.msg_id = (select h.msg_id from pgmq.%1$I h where h.msg_id = $1 for update skip locked)
    $sql$, 'q_' || v_queue)
  using v_msg, p_delay;
  get diagnostics v_updated = row_count;
  if v_updated > 0 and p_delay = 0 then
    perform pgflow._announce_work(v_queue);
  end if;
end;
$$;
