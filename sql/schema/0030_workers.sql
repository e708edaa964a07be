-- Workers and worker functions (deployments). Built before the runtime tables because a task
-- records the worker that claimed it (step_tasks.last_worker_id).
--
-- Column order is the order the migrations added the columns (later columns at the end).

-- One row per worker process. queue_name is its subscription; protocol the worker protocol it
-- spoke at registration (see worker_protocol()).
create table pgflow.workers (
  worker_id         uuid primary key,
  queue_name        text not null,
  function_name     text not null,
  started_at        timestamptz not null default now(),
  deprecated_at     timestamptz,
  stopped_at        timestamptz,
  last_heartbeat_at timestamptz not null default now(),
  protocol          int not null
);
create index idx_workers_queue_name on pgflow.workers (queue_name);
create index idx_workers_heartbeat on pgflow.workers (last_heartbeat_at);

-- One row per deployment (WorkerConfig::function_name). A fatal claim pauses it until an
-- operator calls resume_worker_function().
create table pgflow.worker_functions (
  function_name   text primary key,
  enabled         boolean not null default true,
  debounce        interval not null default '6 seconds' check (debounce >= '1 second'),
  last_invoked_at timestamptz,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  paused_at       timestamptz,
  pause_reason    text,
  constraint pause_has_reason check ((paused_at is null) = (pause_reason is null))
);

-- Claims a worker gave back (release_claim, since 0030). A claim whose reply was lost may not
-- have begun when its worker gives it back: its query can still be on its way to a server
-- backend, or running there. release_claim records the claim here under the worker's row lock
-- (FOR UPDATE), and claim_tasks locks that row (FOR KEY SHARE) before it looks here, so a claim
-- given back before it began claims nothing, and a release waits for a claim in progress. A
-- release deletes its worker's rows older than a day; deleting the worker deletes its rows.
create table pgflow.released_claims (
  worker_id   uuid not null references pgflow.workers (worker_id) on delete cascade,
  claim_id    uuid not null,
  released_at timestamptz not null default now(),
  primary key (worker_id, claim_id)
);
