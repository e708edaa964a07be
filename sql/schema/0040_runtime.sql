-- Runtime state: runs, one step state per (run, step), one task per unit of work.
--
-- Column order is the order the migrations added the columns (later columns at the end).

-- Run statuses: started -> completed | failed; resume_run takes a failed run back to started.
-- A cancelled run is failed with cancelled_at set (and the caller's cancel_reason, if any), so
-- clients that know only started/completed/failed see it end. restart_of_run_id links a
-- retry_run's new run to the run it retried (unset if that run is deleted).
create table pgflow.runs (
  run_id            uuid primary key not null default pgflow._new_run_id(),
  flow_slug         text not null references pgflow.flows (flow_slug),
  status            text not null default 'started',
  input             jsonb not null,
  output            jsonb,
  remaining_steps   int not null default 0 check (remaining_steps >= 0),
  started_at        timestamptz not null default now(),
  completed_at      timestamptz,
  failed_at         timestamptz,
  cancelled_at      timestamptz,
  cancel_reason     text,
  restart_of_run_id uuid references pgflow.runs (run_id) on delete set null,
  constraint status_is_valid check (status in ('started', 'failed', 'completed')),
  constraint completed_at_or_failed_at check (not (completed_at is not null and failed_at is not null)),
  constraint completed_at_is_after_started_at check (completed_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (failed_at is null or failed_at >= started_at),
  constraint cancelled_runs_are_failed check (cancelled_at is null or (status = 'failed' and failed_at is not null)),
  constraint cancel_reason_only_when_cancelled check (cancel_reason is null or cancelled_at is not null)
);
create index idx_runs_flow_slug on pgflow.runs (flow_slug);
create index idx_runs_restart_of_run_id on pgflow.runs (restart_of_run_id) where restart_of_run_id is not null;

-- Step statuses: created -> started -> completed | failed | skipped (taskless steps go
-- created -> completed; unmet conditions created -> skipped | failed).
create table pgflow.step_states (
  -- (flow_slug needs no key of its own: (flow_slug, step_slug) references a step, whose flow
  -- exists; each foreign key costs a lookup and a row lock per insert, since 0015)
  flow_slug       text not null,
  run_id          uuid not null references pgflow.runs (run_id),
  step_slug       text not null,
  status          text not null default 'created',
  remaining_tasks int,
  initial_tasks   int check (initial_tasks >= 0),
  remaining_deps  int not null default 0 check (remaining_deps >= 0),
  output          jsonb,
  error_message   text,
  skip_reason     text,
  created_at      timestamptz not null default now(),
  started_at      timestamptz,
  completed_at    timestamptz,
  failed_at       timestamptz,
  skipped_at      timestamptz,
  primary key (run_id, step_slug),
  foreign key (flow_slug, step_slug) references pgflow.steps (flow_slug, step_slug),
  constraint status_is_valid check (status in ('created', 'started', 'completed', 'failed', 'skipped')),
  constraint status_and_remaining_tasks_match check (status <> 'completed' or remaining_tasks = 0),
  constraint remaining_tasks_state_consistency check (
    remaining_tasks is null or status not in ('created', 'skipped')),
  constraint initial_tasks_known_when_started check (status <> 'started' or initial_tasks is not null),
  constraint output_only_for_completed_or_null check (output is null or status = 'completed'),
  constraint skip_reason_matches_status check (
    (status = 'skipped' and skip_reason is not null) or (status <> 'skipped' and skip_reason is null)),
  constraint completed_at_or_failed_at_or_skipped_at check (
    (case when completed_at is not null then 1 else 0 end
     + case when failed_at is not null then 1 else 0 end
     + case when skipped_at is not null then 1 else 0 end) <= 1),
  constraint started_at_is_after_created_at check (started_at is null or started_at >= created_at),
  constraint completed_at_is_after_started_at check (completed_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (failed_at is null or failed_at >= started_at),
  constraint skipped_at_is_after_created_at check (skipped_at is null or skipped_at >= created_at)
);
-- No index beside the primary key (since 0015): every query reaches step states by run (a run
-- has a handful), and each index costs an entry on every status change (bench/README.md, "Hot
-- path"). Deleting a flow's rows goes through its runs (_delete_flow_contents).

-- Task statuses: queued -> started -> completed | failed, back to queued on retry or stall
-- recovery; skipped (its step was skipped) and cancelled (its run failed) are terminal too.
-- A wait step's task (since 0021) has no message: waiting -> completed | failed, resolved by a
-- signal or its wake_at (_resolve_waiting_task), waiting again when its run resumes.
-- (queue_name, message_id) is a queue-backed task's durable identity in PGMQ (message ids are
-- queue-scoped); queue_name is a snapshot of the step's route taken when the task was created
-- and never changes. message_id stays nullable.
create table pgflow.step_tasks (
  -- (flow_slug and run_id need no keys of their own: (run_id, step_slug) references a step
  -- state, which references its run and its flow's step; each foreign key costs a lookup and a
  -- row lock per insert, since 0015)
  flow_slug              text not null,
  run_id                 uuid not null,
  step_slug              text not null,
  message_id             bigint,
  task_index             int not null default 0,
  status                 text not null default 'queued',
  attempts_count         int not null default 0,
  error_message          text,
  output                 jsonb,
  queued_at              timestamptz not null default now(),
  started_at             timestamptz,
  completed_at           timestamptz,
  failed_at              timestamptz,
  last_worker_id         uuid references pgflow.workers (worker_id) on delete set null,
  requeued_count         int not null default 0,
  last_requeued_at       timestamptz,
  permanently_stalled_at timestamptz,
  queue_name             text not null,
  last_claim_id          uuid,  -- the claim_tasks call that started it (worker protocol 6)
  -- Concurrency limits (since 0018): NULL for a task no limit applies to; 'held' while it
  -- waits for a slot (without a message since 0022; before, with an invisible one), 'admitted'
  -- once it has one (0080_concurrency_limits.sql).
  gate                   text,
  -- The run's priority while a limit applies to the task (set_run_priority, since 0018);
  -- NULL otherwise.
  priority               int,
  -- Fair shares (since 0019): the task's concurrency key, taken from its run's input when a key
  -- applies to its step ('' when the input has none there), and its key's weight (default 1);
  -- NULL otherwise.
  concurrency_key        text,
  key_weight             real,
  -- A waiting task's deadline (since 0021): when its sleep ends or its wait for a signal times
  -- out (NULL: it waits for a signal for ever). pgflow.wake_waiting_tasks resolves it then.
  wake_at                timestamptz,
  constraint step_tasks_pkey primary key (run_id, step_slug, task_index),
  foreign key (run_id, step_slug) references pgflow.step_states (run_id, step_slug),
  constraint valid_status check (
    status in ('queued', 'started', 'completed', 'failed', 'skipped', 'cancelled', 'waiting')),
  constraint output_valid_only_for_completed check (
    output is null or status in ('completed', 'failed')),
  constraint attempts_count_nonnegative check (attempts_count >= 0),
  constraint completed_at_or_failed_at check (not (completed_at is not null and failed_at is not null)),
  constraint completed_at_is_after_queued_at check (completed_at is null or completed_at >= queued_at),
  constraint failed_at_is_after_queued_at check (failed_at is null or failed_at >= queued_at),
  constraint started_at_is_after_queued_at check (started_at is null or started_at >= queued_at),
  constraint completed_at_is_after_started_at check (
    completed_at is null or started_at is null or completed_at >= started_at),
  constraint failed_at_is_after_started_at check (
    failed_at is null or started_at is null or failed_at >= started_at),
  constraint queue_name_is_canonical
    check (queue_name = lower(queue_name) and length(queue_name) between 1 and 47),
  constraint gate_is_valid check (gate in ('held', 'admitted'))
);
-- Indexes (since 0015), each one a query needs; every status change writes an entry into each
-- index whose predicate the new row matches (bench/README.md, "Hot path"). Queries by run and
-- step use the primary key, also for a status (a run has few tasks per step, and a map's
-- output reads them in task_index order anyway).
-- Claims: a message's task.
create unique index step_tasks_queue_message_key on pgflow.step_tasks (queue_name, message_id)
  where message_id is not null;
-- `pgflow status --metrics`: a flow's waiting tasks (one entry per task, written at insert).
create index idx_step_tasks_queued on pgflow.step_tasks (flow_slug) where status = 'queued';
-- Running tasks: stall recovery scans them all (few: those in flight), release_claim finds a
-- worker's.
create index idx_step_tasks_started on pgflow.step_tasks (last_worker_id) where status = 'started';
-- Concurrency limits (since 0018): a limited flow's tasks that hold a slot (gate 'admitted'),
-- counted per step, and those waiting for one ('held'; always queued), in admission order.
-- Tasks without a limit, and tasks that ended, have no entry.
create index idx_step_tasks_gated on pgflow.step_tasks
  (flow_slug, gate, step_slug, priority desc, queued_at, run_id, task_index)
  where gate is not null and status in ('queued', 'started');
-- Fair shares (since 0019): a keyed step's waiting tasks by key, in admission order within a
-- key; admission walks the keys (one probe each) instead of reading every waiting task.
create index idx_step_tasks_held_keys on pgflow.step_tasks
  (flow_slug, step_slug, concurrency_key, priority desc, queued_at, run_id, task_index)
  where gate = 'held' and status = 'queued' and concurrency_key is not null;
-- Timers (since 0021): waiting tasks with a deadline, in deadline order (wake_waiting_tasks).
create index idx_step_tasks_wake_at on pgflow.step_tasks (wake_at)
  where status = 'waiting' and wake_at is not null;
