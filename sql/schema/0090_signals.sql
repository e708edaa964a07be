-- Signals (since 0021): what pgflow.send_signal received for a wait step's task, addressed by
-- (run, step, task index) and named by the sender's signal_id, which makes a resend a
-- duplicate. A signal is consumed (consumed_at) by the waiting task it completed; one sent
-- before its step waits is buffered (consumed_at NULL) until the step starts waiting: at most
-- one per task, and at most 1,000 per run (send_signal refuses more). Kept, consumed or not,
-- until its run is deleted, so that a duplicate is recognised for as long as the run exists.
create table pgflow.signals (
  run_id      uuid not null references pgflow.runs (run_id) on delete cascade,
  step_slug   text not null,
  task_index  int not null,
  signal_id   text not null,
  payload     jsonb not null,
  received_at timestamptz not null default now(),
  consumed_at timestamptz,
  constraint signals_pkey primary key (run_id, step_slug, task_index, signal_id),
  constraint task_index_nonnegative check (task_index >= 0),
  constraint signal_id_length check (length(signal_id) between 1 and 255)
);
-- At most one buffered signal per task.
create unique index signals_buffered_key on pgflow.signals (run_id, step_slug, task_index)
  where consumed_at is null;

-- Timer retries (since 0028): a run whose due wait timers could not end its tasks (ending them
-- raised: the step it would start lost its queue, say) waits here until retry_at, a minute on;
-- wake_waiting_tasks leaves it alone until then and deletes the row once its timers went
-- through. The tasks' wake_at stays what it was (a sleep's output names it). `tries` counts the
-- failed tries, `last_error` the last one's SQLSTATE and message, for operators.
create table pgflow.timer_retries (
  run_id     uuid primary key references pgflow.runs (run_id) on delete cascade,
  retry_at   timestamptz not null,
  tries      int not null default 1,
  last_error text not null,
  constraint tries_positive check (tries >= 1)
);
