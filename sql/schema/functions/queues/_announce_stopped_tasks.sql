-- Tells the workers of a queue that tasks they may be running are no longer wanted (cancelled
-- or skipped): NOTIFY on channel "pgflow_stop:<queue_name>" (delivered at commit; one per queue
-- and transaction). A worker that hears it checks its running tasks and fires the stop tokens
-- of those that are no longer started by it (docs/worker.md).
-- Called by: _terminate_tasks.
create or replace function pgflow._announce_stopped_tasks(p_queue_name text) returns void
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pg_notify('pgflow_stop:' || p_queue_name, '');
end;
$$;
