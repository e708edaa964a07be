-- Concurrency limits and run priorities (since 0018). Limits are deployment options beside a flow's shape, like its queue
-- mode. A flow with any limit has a gate row, the row its admissions lock (one per flow, so
-- admissions of one flow queue on it and those of different flows never meet); its
-- `flow_limit` caps the started tasks of the whole flow (NULL: no flow-wide cap). Each limited
-- step has a row in step_concurrency_limits. Written only by ensure_flow_compiled; a flow keeps
-- its limits for life (other limits are another flow version), so the tasks of a run always
-- meet the limits they were queued under. docs/flow-control.md, "Concurrency limits".
create table pgflow.concurrency_gates (
  flow_slug   text not null references pgflow.flows (flow_slug) on delete cascade,
  flow_limit  int,
  constraint concurrency_gates_pkey primary key (flow_slug),
  constraint flow_limit_is_positive check (flow_limit > 0)
);

create table pgflow.step_concurrency_limits (
  flow_slug   text not null,
  step_slug   text not null,
  step_limit  int not null,
  constraint step_concurrency_limits_pkey primary key (flow_slug, step_slug),
  constraint step_concurrency_limits_step_fkey foreign key (flow_slug, step_slug)
    references pgflow.steps (flow_slug, step_slug) on delete cascade,
  constraint step_concurrency_limits_gate_fkey foreign key (flow_slug)
    references pgflow.concurrency_gates (flow_slug) on delete cascade,
  constraint step_limit_is_positive check (step_limit > 0)
);

-- Run priorities (since 0018): a run's priority, when it is not the default 0. A limited
-- flow's held tasks are admitted highest priority first (step_tasks.priority, copied from here
-- when a task is queued held and by set_run_priority); the row goes with its run.
create table pgflow.run_priorities (
  run_id    uuid not null references pgflow.runs (run_id) on delete cascade,
  priority  int not null,
  constraint run_priorities_pkey primary key (run_id),
  constraint priority_is_not_the_default check (priority <> 0)
);
