-- Concurrency limits and run priorities (since 0018). Limits are deployment options beside a flow's shape, like its queue
-- mode. A flow with any limit has a gate row, the row its admissions lock (one per flow, so
-- admissions of one flow queue on it and those of different flows never meet); its
-- `flow_limit` caps the started tasks of the whole flow (NULL: no flow-wide cap). Each limited
-- step has a row in step_concurrency_limits. Written only by ensure_flow_compiled; a flow keeps
-- its limits for life (other limits are another flow version), so the tasks of a run always
-- meet the limits they were queued under. docs/flow-control.md, "Concurrency limits".
--
-- Fair shares (since 0019): a concurrency key (key_path, a path into the run input) shares the
-- slots of a limit among the key's values (tenants) round robin, each value weighted by the
-- number at weight_path (default 1), each value holding at most key_limit slots. On the gate
-- row it is the flow's key (shares counted across the flow's steps), on a step's row the step's
-- own (counted within the step; it replaces the flow's for that step).
-- docs/flow-control.md, "Fair shares".
create table pgflow.concurrency_gates (
  flow_slug   text not null references pgflow.flows (flow_slug) on delete cascade,
  flow_limit  int,
  key_path    text[],
  key_limit   int,
  weight_path text[],
  -- Counts the flow's admissions (each one takes a turn): the clock of concurrency_keys.
  turn        bigint not null default 0,
  -- Whether a key applies to any of its steps (the flow's or a step's own).
  has_keys    boolean not null default false,
  constraint concurrency_gates_pkey primary key (flow_slug),
  constraint flow_limit_is_positive check (flow_limit > 0),
  constraint key_limit_is_positive check (key_limit > 0),
  constraint key_options_need_a_key check (key_path is not null or (key_limit is null and weight_path is null))
);

create table pgflow.step_concurrency_limits (
  flow_slug   text not null,
  step_slug   text not null,
  step_limit  int,
  key_path    text[],
  key_limit   int,
  weight_path text[],
  constraint step_concurrency_limits_pkey primary key (flow_slug, step_slug),
  constraint step_concurrency_limits_step_fkey foreign key (flow_slug, step_slug)
    references pgflow.steps (flow_slug, step_slug) on delete cascade,
  constraint step_concurrency_limits_gate_fkey foreign key (flow_slug)
    references pgflow.concurrency_gates (flow_slug) on delete cascade,
  constraint step_limit_is_positive check (step_limit > 0),
  constraint step_has_a_limit_or_a_key check (step_limit is not null or key_path is not null),
  constraint key_limit_is_positive check (key_limit > 0),
  constraint key_options_need_a_key check (key_path is not null or (key_limit is null and weight_path is null))
);

-- Fair shares (since 0019): the key values a flow's admissions serve, in stride-scheduling
-- order. Each value with waiting tasks is active (pass not NULL) and the admission serves the
-- active value with the lowest pass (then the one served longest ago: last_turn, a turn of
-- concurrency_gates; never served: first), adding 1 / weight to its pass per task admitted: so
-- values take turns, weighted, whatever their backlog. A value that joins or comes back starts
-- at the lowest active pass of its scope. A value found with nothing waiting goes idle (pass
-- NULL); stall recovery's sweep deletes idle rows. Scope: the step of a step's own key, '' for
-- the flow's key. Written only by admissions, under the flow's gate row.
create table pgflow.concurrency_keys (
  flow_slug   text not null references pgflow.concurrency_gates (flow_slug) on delete cascade,
  scope       text not null,
  key         text not null,
  pass        float8,
  last_turn   bigint,
  constraint concurrency_keys_pkey primary key (flow_slug, scope, key)
);
create index idx_concurrency_keys_next on pgflow.concurrency_keys
  (flow_slug, scope, pass, last_turn nulls first, key)
  where pass is not null;

-- Run priorities (since 0018): a run's priority, when it is not the default 0. A limited
-- flow's held tasks are admitted highest priority first (step_tasks.priority, copied from here
-- when a task is queued held and by set_run_priority); the row goes with its run.
create table pgflow.run_priorities (
  run_id    uuid not null references pgflow.runs (run_id) on delete cascade,
  priority  int not null,
  constraint run_priorities_pkey primary key (run_id),
  constraint priority_is_not_the_default check (priority <> 0)
);
