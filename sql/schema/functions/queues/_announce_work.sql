-- Wakes idle workers of a queue: NOTIFY on channel "pgflow_queue:<queue_name>" (delivered at
-- commit; identical notifications of one transaction collapse into one). Sent when messages
-- become visible at once: a started step without start delay, a requeued task. Workers also
-- poll at an interval, which covers delayed visibility (retry backoff, start_delay).
-- Called by: _enqueue_step_tasks, _send_task_messages, _set_task_message_vt.
create or replace function pgflow._announce_work(p_queue_name text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pg_notify('pgflow_queue:' || p_queue_name, '');
end;
$$;
