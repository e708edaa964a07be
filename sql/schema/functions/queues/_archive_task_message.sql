-- Archives one task's message (if it has one) in the task's queue snapshot, unless a reader
-- holds it (then that reader's claim archives it: see _archive_messages). Idempotent.
-- Locks: the caller holds the task's run; the queue row last, never waited for.
-- Called by: complete_task, _fail_task, _fail_type_violation.
create or replace function pgflow._archive_task_message(p_run_id uuid, p_step_slug text,
                                                        p_task_index int)
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
    perform pgflow._archive_messages(array[v_queue], array[v_msg]);
  end if;
end;
$$;
