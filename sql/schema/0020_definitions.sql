-- Flow definitions: flows, their steps and the edges between steps. Immutable once written
-- (a structural change is a new flow slug); only the opt_* columns are runtime-tunable.
--
-- Column order is the order the migrations added the columns (later columns at the end), so a
-- database built from this directory and one built by the migrations are identical.

-- One row per flow. flow_slug is the concrete identity: an immutable version, the name runs,
-- tasks, queues and events carry. queue_mode is deployment metadata beside the shape: `flow`
-- (every step's tasks go to the flow's queue lower(flow_slug)) or `step` (each step has its own
-- private queue, see _step_queue_name); the route itself is steps.queue_name. flow_alias is the
-- flow's immutable membership in a stable dispatch name (the flow slug itself unless deployed
-- under another alias); pgflow.flow_aliases says which member is active.
create table pgflow.flows (
  flow_slug        text primary key,
  opt_max_attempts int not null default 3,
  opt_base_delay   int not null default 1,
  opt_timeout      int not null default 60,
  created_at       timestamptz not null default now(),
  queue_mode       text not null default 'flow',
  flow_alias       text not null,
  constraint slug_is_valid check (pgflow.is_valid_slug(flow_slug)),
  constraint opt_max_attempts_is_nonnegative check (opt_max_attempts >= 0),
  constraint opt_base_delay_is_nonnegative check (opt_base_delay >= 0),
  constraint opt_timeout_is_positive check (opt_timeout > 0),
  -- PGMQ queue names have at most 47 characters.
  constraint flow_slug_fits_queue_name check (length(flow_slug) <= 47),
  constraint queue_mode_is_valid check (queue_mode in ('flow', 'step')),
  constraint flow_alias_is_valid check (pgflow.is_valid_slug(flow_alias)),
  constraint flows_flow_slug_flow_alias_key unique (flow_slug, flow_alias)
);
-- Slugs are unique ignoring case (the exact spelling is kept), atomically for every writer.
create unique index flows_flow_slug_lower_key on pgflow.flows (lower(flow_slug));
create index idx_flows_flow_alias on pgflow.flows (flow_alias);

-- One row per alias: the active concrete version, the one start_flow(alias) starts. The foreign
-- key keeps the pointer on a member of the alias (and a flow that is the active target from
-- being deleted under it). Changed only by startup deployment (an alias without a row gets its
-- first member) and by activate_flow_version (compare-and-swap).
create table pgflow.flow_aliases (
  flow_alias text primary key,
  flow_slug  text not null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (flow_slug, flow_alias) references pgflow.flows (flow_slug, flow_alias)
);
-- Aliases, like slugs, are unique ignoring case.
create unique index flow_aliases_flow_alias_lower_key on pgflow.flow_aliases (lower(flow_alias));

-- One row per step. step_index is the insertion order, a topological order. queue_name is the
-- step's resolved route: the physical queue its tasks are sent to.
create table pgflow.steps (
  flow_slug               text not null references pgflow.flows (flow_slug),
  step_slug               text not null,
  step_type               text not null default 'single',
  step_index              int not null default 0,
  deps_count              int not null default 0 check (deps_count >= 0),
  opt_max_attempts        int,
  opt_base_delay          int,
  opt_timeout             int,
  opt_start_delay         int,
  required_input_pattern  jsonb,
  forbidden_input_pattern jsonb,
  when_unmet              text not null default 'skip',
  when_exhausted          text not null default 'fail',
  created_at              timestamptz not null default now(),
  queue_name              text not null,
  -- A concurrency limit applies to its tasks (its own or its flow's; since 0018): they are
  -- queued held (_store_flow_control keeps it; the starts read it with the step).
  concurrency_limited     boolean not null default false,
  -- A wait step (since 0021): what its tasks wait for instead of a worker - a signal or a
  -- sleep (_wait_problem says what is valid; docs/waiting.md). NULL for a step with a handler.
  -- It is the step's "wait" in the flow shape, so a flow with waits never matches a shape
  -- without them (an upstream worker's).
  wait                    jsonb,
  primary key (flow_slug, step_slug),
  unique (flow_slug, step_index),
  check (pgflow.is_valid_slug(step_slug)),
  check (step_type in ('single', 'map')),
  constraint opt_max_attempts_is_nonnegative check (opt_max_attempts is null or opt_max_attempts >= 0),
  constraint opt_base_delay_is_nonnegative check (opt_base_delay is null or opt_base_delay >= 0),
  constraint opt_timeout_is_positive check (opt_timeout is null or opt_timeout > 0),
  constraint opt_start_delay_is_nonnegative check (opt_start_delay is null or opt_start_delay >= 0),
  constraint required_input_pattern_is_object check (
    required_input_pattern is null or jsonb_typeof(required_input_pattern) = 'object'),
  constraint forbidden_input_pattern_is_object check (
    forbidden_input_pattern is null or jsonb_typeof(forbidden_input_pattern) = 'object'),
  constraint when_unmet_is_valid check (when_unmet in ('fail', 'skip', 'skip-cascade')),
  constraint when_exhausted_is_valid check (when_exhausted in ('fail', 'skip', 'skip-cascade')),
  constraint queue_name_is_canonical
    check (queue_name = lower(queue_name) and length(queue_name) between 1 and 47),
  constraint wait_is_valid check (wait is null or pgflow._wait_problem(wait, step_type) is null)
);
create index idx_steps_queue_name on pgflow.steps (queue_name);
create unique index steps_step_slug_lower_key on pgflow.steps (flow_slug, lower(step_slug));

-- One row per edge: step_slug depends on dep_slug.
create table pgflow.deps (
  flow_slug  text not null references pgflow.flows (flow_slug),
  dep_slug   text not null,
  step_slug  text not null,
  created_at timestamptz not null default now(),
  primary key (flow_slug, dep_slug, step_slug),
  foreign key (flow_slug, dep_slug) references pgflow.steps (flow_slug, step_slug),
  foreign key (flow_slug, step_slug) references pgflow.steps (flow_slug, step_slug),
  check (dep_slug <> step_slug)
);
create index idx_deps_by_flow_step on pgflow.deps (flow_slug, step_slug);
create index idx_deps_by_flow_dep on pgflow.deps (flow_slug, dep_slug);
