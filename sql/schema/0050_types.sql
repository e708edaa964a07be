-- Composite types of the function API.

-- A claimed task, as upstream's start_tasks returns it.
create type pgflow.step_task_record as (
  flow_slug  text,
  run_id     uuid,
  step_slug  text,
  input      jsonb,
  msg_id     bigint,
  task_index int,
  flow_input jsonb
);

-- How claim_tasks classified one message (internal). `task_ctid` is the row address of its
-- task, read under the run's lock, so that the claim updates exactly that row version.
create type pgflow._claim_item as (
  msg_id bigint, class text, reason text, run_id uuid, step_slug text, task_index int,
  deadline timestamptz, task_ctid tid);

-- One row per message of a claimed batch (claim_tasks).
--   outcome  claimed   the task is the worker's: input/flow_input/attempt are set
--            deferred  its task is already running; the message is hidden until the task's
--                      stall-recovery deadline (started_at + timeout + 30 s)
--            archived  its task is finished (or can never run), or the message is clearly not
--                      pgflow's: the message was archived (reason says which)
--            taken     another worker claimed the task at the same moment; untouched
--            gone      no such message in the queue and no task: nothing to do
--            fatal     unsupported work (reason says why): nothing was claimed or archived
--            reset     another message of a fatal batch: made visible again, untouched
create type pgflow.claim_record as (
  outcome    text,
  queue_name text,
  msg_id     bigint,
  flow_slug  text,
  run_id     uuid,
  step_slug  text,
  task_index int,
  attempt    int,
  input      jsonb,
  flow_input jsonb,
  reason     text,
  timeout    int     -- claimed: the step's effective timeout in seconds (its deadline)
);
