-- Records a heartbeat; returns true when an operator deprecated the worker (it should stop
-- polling and drain).
-- Called by: the worker's heartbeat thread.
create or replace function pgflow.worker_heartbeat(worker_id uuid) returns boolean
language sql volatile
set search_path = ''
as $$
  update pgflow.workers w set last_heartbeat_at = clock_timestamp()
  where w.worker_id = worker_heartbeat.worker_id
  returning w.deprecated_at is not null
$$;
