-- Records that a worker stopped (its last act).
-- Called by: the worker's heartbeat thread at stop.
create or replace function pgflow.mark_worker_stopped(worker_id uuid) returns void
language sql volatile
set search_path = ''
as $$
  update pgflow.workers w set stopped_at = clock_timestamp()
  where w.worker_id = mark_worker_stopped.worker_id
$$;
