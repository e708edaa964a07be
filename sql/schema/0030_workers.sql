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

-- One row per worker (since 0030), created with it: the fence between its claims and its
-- releases of claims whose reply was lost (release_claim). A claim that read messages locks it
-- FOR KEY SHARE and claims nothing for an id in released_claim_ids; a release locks it FOR
-- UPDATE, which waits for a claim still running, and adds the id (the last 100 are kept). A
-- lost claim may not have ended, or even begun, when its worker gives it back. Only the
-- worker's claims and releases lock its fence (no foreign key refers to it; pruning deletes it
-- before the worker's row), so a release holding one is never in a cycle with the foreign-key
-- checks that lock worker rows.
create table pgflow.claim_fences (
  worker_id          uuid primary key references pgflow.workers (worker_id) on delete cascade,
  released_claim_ids uuid[] not null default '{}'
);
