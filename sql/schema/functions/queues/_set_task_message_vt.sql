-- Sets the visibility of one task's message to now + p_delay seconds (retry backoff, stall
-- recovery) in the task's queue snapshot; a delay of 0 announces the work.
-- Locks: the caller holds the task's run; the queue row last.
-- Called by: _fail_task, requeue_stalled_tasks.
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
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgmq.set_vt(v_queue, v_msg, p_delay);
    if p_delay = 0 then
      perform pgflow._announce_work(v_queue);
    end if;
  end if;
end;
$$;
