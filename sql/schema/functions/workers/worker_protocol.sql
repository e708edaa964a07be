-- The worker protocol this database speaks. A worker compares it with its own before doing
-- anything else, and the database refuses any protocol it does not support at compilation and
-- registration (_require_worker_protocol: this one and 4).
--   2  queue identity: claim_tasks(queue, flow, ids, worker), register_worker (0002)
--   3  per-step queues: ensure_flow_compiled(..., queue_mode, route_map), claims with a step
--      selector, step workers registered on their step's queue (0004)
--   4  flow aliases: ensure_flow_compiled(..., flow_alias) deploys a version under an alias
--      and reports its activation (0005)
--   5  batch results: complete_tasks(jsonb) / fail_tasks(jsonb) (0006).
--   6  claims carry the worker's claim id (claim_tasks(..., claim_id)) and a claim whose reply
--      was lost is given back (release_claim); failures may be permanent (fail_tasks rows with
--      "permanent": true) (0014).
-- Protocol 4 and 5 workers are still accepted: everything they call works as it did.
-- Called by: EdgeWorker startup; _require_worker_protocol.
create or replace function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = pg_catalog, pg_temp
as $$
  select 6
$$;
