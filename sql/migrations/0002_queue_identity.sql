-- pgflow SQL core, 0002: physical queue identity (seed 000_a7bca4e4d3d3ced1).
--
-- A task's durable identity in the queue substrate is (queue_name, message_id): PGMQ message ids
-- are queue-scoped. This migration stores the resolved queue on every step (steps.queue_name)
-- and snapshots it on every task (step_tasks.queue_name), makes every PGMQ operation use the
-- task's snapshot, enforces the shared slug rules and case-insensitive slug uniqueness, makes
-- queue provisioning ownership-checked, replaces the claim with a queue-aware boundary that
-- classifies the whole batch, and adds a versioned worker startup handshake. Routing does not
-- change: every step of a flow uses the flow's generated queue lower(flow_slug).
--
-- Applied by the pgflow migration runner in one transaction: any failure leaves the database
-- exactly as it was. Sections marked [migration-only] are preflight and backfill: they change no
-- schema (tests/integration/upgrade_test.cc proves a fresh install and an upgraded populated
-- database end with identical schemas, and that these sections are what a schema diff cannot
-- infer). A section runs from a line `-- [migration-only: <what>]` through the line
-- `-- [end migration-only]`; a single statement is marked by ending its line with
-- `-- [migration-only: <what>]`. The test strips exactly these.
--
-- MAINTENANCE FENCE. Stop workers and producers first (docs/upgrading.md). The migration then
-- takes, in this order, with lock_timeout = 10 s each, so stragglers (producers calling
-- start_flow, definition and deletion calls, pruning, stall recovery from cron or workers,
-- worker callbacks) either finish first or wait until it commits:
--   1. ACCESS EXCLUSIVE on pgflow.flows, steps, deps     (definitions)
--   2. ACCESS EXCLUSIVE on pgflow.runs, step_states, step_tasks   (runtime, lock order 2-4)
--   3. ACCESS EXCLUSIVE on pgflow.workers, worker_functions
--   4. EXCLUSIVE on pgmq.meta   (no queue is created or dropped during preflight; reads allowed)
-- A lock that cannot be had in time (or a deadlock with a straggler) fails the migration with
-- nothing changed; run it again.

-- [migration-only: fence]
set local lock_timeout = '10s';
lock table pgflow.flows, pgflow.steps, pgflow.deps in access exclusive mode;
lock table pgflow.runs, pgflow.step_states, pgflow.step_tasks in access exclusive mode;
lock table pgflow.workers, pgflow.worker_functions in access exclusive mode;
lock table pgmq.meta in exclusive mode;
-- [end migration-only]

-- [migration-only: preflight]
-- The same report as sql/audit/0002_queue_identity_audit.sql (the text between the AUDIT
-- markers is identical in both files; a test keeps it so), now run under the fence.
-- BEGIN AUDIT
create function pg_temp.pgflow_slug_problem(slug text) returns text
language sql immutable
as $$
  select case
    when slug is null or slug = '' then 'is empty'
    when length(slug) > 128 then 'is longer than 128 characters'
    when slug !~ '^[A-Za-z0-9_]+$' then 'may contain only ASCII letters, digits and underscores'
    when slug ~ '^[0-9]' then 'starts with a digit'
    when slug ~ '^_' then 'starts with an underscore'
    when slug ~ '_$' then 'ends with an underscore'
    when slug ~ '__' then 'contains a double underscore (reserved for generated queue names)'
    when slug = 'run' then 'is the reserved word "run"'
  end
$$;

-- One row per problem. severity: error (the upgrade refuses), action (do it after upgrading),
-- info (what the upgrade will do). Counts are exact; samples are at most 5 keys.
create function pg_temp.pgflow_queue_identity_audit()
returns table (severity text, category text, flow_slug text, step_slug text, detail text,
               repair_hint text)
language plpgsql
as $$
declare
  v_flow record;
  v_meta_count int;
  v_meta_names text;
  v_count bigint;
  v_sample text;
  v_prune record;
begin
  -- Slugs under the shared rules (letters, digits, single internal underscores, no leading
  -- digit or underscore, no trailing underscore, no __, at most 128, not "run").
  return query
  select 'error', 'invalid_flow_slug', f.flow_slug, null::text,
         format('flow slug "%s" %s', f.flow_slug, pg_temp.pgflow_slug_problem(f.flow_slug)),
         'create the flow under a compliant slug (a new version), move producers to it, then delete the old flow with pgflow.delete_flow_and_data()'
  from pgflow.flows f where pg_temp.pgflow_slug_problem(f.flow_slug) is not null;

  return query
  select 'error', 'invalid_step_slug', s.flow_slug, s.step_slug,
         format('step slug "%s" of flow "%s" %s', s.step_slug, s.flow_slug,
                pg_temp.pgflow_slug_problem(s.step_slug)),
         'rename the step in a new flow version; flow definitions are immutable'
  from pgflow.steps s where pg_temp.pgflow_slug_problem(s.step_slug) is not null;

  return query
  select 'error', 'flow_queue_name_too_long', f.flow_slug, null::text,
         format('queue name "%s" would be %s characters; PGMQ allows 47', lower(f.flow_slug),
                length(f.flow_slug)),
         'create the flow under a slug of at most 47 characters'
  from pgflow.flows f where length(f.flow_slug) > 47;

  return query
  select 'error', 'case_conflict_flow', f.flow_slug, null::text,
         format('flow slug "%s" differs only in case from %s', f.flow_slug,
                string_agg(format('"%s"', o.flow_slug), ', ' order by o.flow_slug)),
         'keep one of these flows; recreate the others under distinct slugs'
  from pgflow.flows f
  join pgflow.flows o on lower(o.flow_slug) = lower(f.flow_slug) and o.flow_slug <> f.flow_slug
  group by f.flow_slug;

  return query
  select 'error', 'case_conflict_step', s.flow_slug, s.step_slug,
         format('step slug "%s" differs only in case from %s in flow "%s"', s.step_slug,
                string_agg(format('"%s"', o.step_slug), ', ' order by o.step_slug), s.flow_slug),
         'recreate the flow as a new version with distinct step slugs'
  from pgflow.steps s
  join pgflow.steps o on o.flow_slug = s.flow_slug and lower(o.step_slug) = lower(s.step_slug)
                     and o.step_slug <> s.step_slug
  group by s.flow_slug, s.step_slug;

  -- Each flow's generated queue: exactly one pgmq.meta row (any spelling) and both tables.
  for v_flow in select f.flow_slug, lower(f.flow_slug) as queue from pgflow.flows f
                order by f.flow_slug loop
    select count(*), string_agg(format('"%s"', m.queue_name), ', ' order by m.queue_name)
    into v_meta_count, v_meta_names
    from pgmq.meta m where lower(m.queue_name) = v_flow.queue;
    if v_meta_count = 0 then
      return query select 'error', 'queue_missing', v_flow.flow_slug, null::text,
        format('flow "%s" has no PGMQ queue "%s" in pgmq.meta', v_flow.flow_slug, v_flow.queue),
        'recreate the queue with pgmq.create() if its tables still exist, or delete the flow';
      continue;
    elsif v_meta_count > 1 then
      return query select 'error', 'queue_ambiguous', v_flow.flow_slug, null::text,
        format('pgmq.meta has %s rows for the same tables of queue "%s" of flow "%s": %s',
               v_meta_count, v_flow.queue, v_flow.flow_slug, v_meta_names),
        'keep one pgmq.meta row per queue: delete the alias rows (the tables are shared)';
      continue;
    end if;
    if to_regclass(format('pgmq.%I', 'q_' || v_flow.queue)) is null
       or to_regclass(format('pgmq.%I', 'a_' || v_flow.queue)) is null then
      return query select 'error', 'queue_malformed', v_flow.flow_slug, null::text,
        format('queue %s of flow "%s" lacks table pgmq.q_%s or pgmq.a_%s', v_meta_names,
               v_flow.flow_slug, v_flow.queue, v_flow.queue),
        'recreate the missing table (drop and recreate the queue when it holds no active work)';
      continue;
    end if;

    -- Active messages no pgflow task claims: the upgrade cannot give them an identity.
    execute format(
      'select count(*), string_agg(q.msg_id::text, '', '' order by q.msg_id) filter (where q.n <= 5)
       from (select q.msg_id, row_number() over (order by q.msg_id) as n from pgmq.%I q
             where not exists (select 1 from pgflow.step_tasks t
                               where lower(t.flow_slug) = $1 and t.message_id = q.msg_id)) q',
      'q_' || v_flow.queue)
    into v_count, v_sample using v_flow.queue;
    if v_count > 0 then
      return query select 'error', 'unmatched_active_message', v_flow.flow_slug, null::text,
        format('%s active message(s) in queue "%s" of flow "%s" match no task (e.g. msg_id %s)',
               v_count, v_flow.queue, v_flow.flow_slug, v_sample),
        'find who sent them (applications must not send to pgflow queues); archive or delete them with pgmq.archive()/pgmq.delete()';
    end if;
  end loop;

  -- (queue, message id) must identify one task.
  return query
  select 'error', 'duplicate_message_identity', min(d.flow_slug), null::text,
         format('%s message id(s) of queue "%s" of flow "%s" are shared by several tasks (e.g. msg_id %s)',
                count(*), d.queue, min(d.flow_slug),
                string_agg(d.message_id::text, ', ' order by d.message_id) filter (where d.n <= 5)),
         'inspect those step_tasks rows; delete the runs that hold the duplicates (pgflow cannot tell which task owns the message)'
  from (select lower(t.flow_slug) as queue, min(t.flow_slug) as flow_slug, t.message_id,
               row_number() over (partition by lower(t.flow_slug) order by t.message_id) as n
        from pgflow.step_tasks t where t.message_id is not null
        group by lower(t.flow_slug), t.message_id having count(*) > 1) d
  group by d.queue;

  -- What the backfill will do.
  return query
  select 'info', 'backfill', null::text, null::text,
         format('%s step(s) and %s task(s) (%s without a queue message) get queue_name = lower(flow_slug)',
                (select count(*) from pgflow.steps), (select count(*) from pgflow.step_tasks),
                (select count(*) from pgflow.step_tasks t where t.message_id is null)),
         null::text;

  -- The optional, manually installed pruning helper reads queues by flow slug.
  for v_prune in
    select p.oid, md5(p.prosrc) as hash from pg_proc p
    join pg_namespace n on n.oid = p.pronamespace
    where n.nspname = 'pgflow' and p.proname = 'prune_data_older_than'
  loop
    return query select 'action', 'prune_function_installed', null::text, null::text,
      case when v_prune.hash = 'c0f88f3fe24314bb6f00435208e4d8fc'
        then 'pgflow.prune_data_older_than(interval) is the stock pre-queue-identity version'
        else 'pgflow.prune_data_older_than(interval) is installed and differs from the stock version (customized?)' end,
      case when v_prune.hash = 'c0f88f3fe24314bb6f00435208e4d8fc'
        then 'after upgrading, replace it: psql -f share/pgflow/sql/contrib/prune_data_older_than.sql'
        else 'adapt it by hand: archive pruning must enumerate each flow''s queues (steps.queue_name) and task rows carry queue_name; see sql/contrib/prune_data_older_than.sql' end;
  end loop;
end;
$$;
-- END AUDIT

do $$
declare
  v_problems text;
begin
  select string_agg(format('  - [%s] %s%s', a.category, a.detail,
                           coalesce(' -> ' || a.repair_hint, '')), e'\n')
  into v_problems
  from pg_temp.pgflow_queue_identity_audit() a where a.severity = 'error';
  if v_problems is not null then
    raise exception e'pgflow 0002 (queue identity) cannot upgrade this database:\n%\nNothing was changed. Run sql/audit/0002_queue_identity_audit.sql for the full report.', v_problems
      using errcode = 'check_violation';
  end if;
end;
$$;
-- [end migration-only]

-- ===========================================================================================
-- Schema
-- ===========================================================================================

alter table pgflow.steps add column queue_name text;
alter table pgflow.step_tasks add column queue_name text;

-- [migration-only: backfill]
update pgflow.steps set queue_name = lower(flow_slug);
update pgflow.step_tasks set queue_name = lower(flow_slug);
-- [end migration-only]

alter table pgflow.steps alter column queue_name set not null;
alter table pgflow.steps add constraint queue_name_is_canonical
  check (queue_name = lower(queue_name) and length(queue_name) between 1 and 47);
alter table pgflow.step_tasks alter column queue_name set not null;
alter table pgflow.step_tasks add constraint queue_name_is_canonical
  check (queue_name = lower(queue_name) and length(queue_name) between 1 and 47);

-- (queue_name, message_id) identifies a queue-backed task; message_id stays nullable.
create unique index step_tasks_queue_message_key on pgflow.step_tasks (queue_name, message_id)
  where message_id is not null;
drop index pgflow.idx_step_tasks_message_id;
drop index pgflow.idx_step_tasks_queued_msg;
create index idx_step_tasks_queued_msg on pgflow.step_tasks (queue_name, message_id)
  where status = 'queued';
create index idx_steps_queue_name on pgflow.steps (queue_name);

-- Slugs are unique ignoring case (exact spelling is kept), atomically for every writer.
create unique index flows_flow_slug_lower_key on pgflow.flows (lower(flow_slug));
create unique index steps_step_slug_lower_key on pgflow.steps (flow_slug, lower(step_slug));
-- A plain flow's queue is lower(flow_slug), and PGMQ queue names have at most 47 characters.
alter table pgflow.flows add constraint flow_slug_fits_queue_name check (length(flow_slug) <= 47);

-- Workers announce the protocol they speak; 0.16.0 workers (which send none) cannot register.
alter table pgflow.workers add column protocol int;
update pgflow.workers set protocol = 1;  -- [migration-only: backfill]
alter table pgflow.workers alter column protocol set not null;

-- A worker function is paused after a fatal claim until an operator resumes it.
alter table pgflow.worker_functions add column paused_at timestamptz;
alter table pgflow.worker_functions add column pause_reason text;
alter table pgflow.worker_functions add constraint pause_has_reason
  check ((paused_at is null) = (pause_reason is null));

-- ===========================================================================================
-- Slugs
-- ===========================================================================================

-- Why a slug breaks the shared rules (the C++ DSL checks the same rules at compile time,
-- both driven by tests/data/slug_cases.tsv), or NULL when it is valid.
create function pgflow._slug_problem(slug text) returns text
language sql immutable parallel safe
set search_path = ''
as $$
  select case
    when slug is null or slug = '' then 'is empty'
    when length(slug) > 128 then 'is longer than 128 characters'
    when slug !~ '^[A-Za-z0-9_]+$' then 'may contain only ASCII letters, digits and underscores'
    when slug ~ '^[0-9]' then 'starts with a digit'
    when slug ~ '^_' then 'starts with an underscore'
    when slug ~ '_$' then 'ends with an underscore'
    when slug ~ '__' then 'contains a double underscore (reserved for generated queue names)'
    when slug = 'run' then 'is the reserved word "run"'
  end
$$;

create or replace function pgflow.is_valid_slug(slug text) returns boolean
language sql immutable parallel safe
set search_path = ''
as $$
  select pgflow._slug_problem(slug) is null
$$;

-- ===========================================================================================
-- Queue identity and ownership
-- ===========================================================================================

-- The lock that serialises definition changes of a flow is keyed by the lower-cased slug, so
-- case aliases ("Orders", "orders") queue behind each other.
create or replace function pgflow._lock_flow_definition(flow_slug text) returns void
language sql volatile
set search_path = ''
as $$
  select pg_advisory_xact_lock(1, hashtext(lower(flow_slug)))
$$;

-- The exact pgmq.meta spelling of a queue, for metadata-sensitive PGMQ calls (drop_queue).
-- Fails unless exactly one pgmq.meta row matches ignoring case (aliases such as "Orders" and
-- "orders" address the same tables) and both of its tables exist.
create function pgflow._queue_meta_name(p_queue_name text) returns text
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_names text[];
begin
  select array_agg(m.queue_name::text order by m.queue_name) into v_names
  from pgmq.meta m where lower(m.queue_name) = lower(p_queue_name);
  if v_names is null then
    raise exception 'PGMQ queue "%" does not exist (no pgmq.meta row)', p_queue_name
      using errcode = 'undefined_object';
  elsif cardinality(v_names) > 1 then
    raise exception 'PGMQ queue "%" is ambiguous: pgmq.meta has % rows for the same tables (%); keep one',
      p_queue_name, cardinality(v_names), array_to_string(v_names, ', ')
      using errcode = 'cardinality_violation';
  end if;
  if to_regclass(format('pgmq.%I', 'q_' || lower(p_queue_name))) is null
     or to_regclass(format('pgmq.%I', 'a_' || lower(p_queue_name))) is null then
    raise exception 'PGMQ queue "%" is malformed: table pgmq.q_% or pgmq.a_% is missing',
      v_names[1], lower(p_queue_name), lower(p_queue_name)
      using errcode = 'undefined_table';
  end if;
  return v_names[1];
end;
$$;

-- Validates, and when absent creates, the generated queue of a plain flow: lower(flow_slug).
-- The caller holds the flow's definition lock and the flow row exists.
--
-- Ownership is derived from the persisted definition, never from a registry: the flow owns
-- its generated queue when one of its steps already routes to it, or when the queue was
-- created in the transaction that persisted the flow (same pgmq.meta.created_at as
-- flows.created_at, i.e. by the compiler or by this function). Anything else holding that
-- name is a collision: pgflow never adopts a queue it did not create.
create function pgflow._provision_flow_queue(p_flow_slug text) returns text
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text := lower(p_flow_slug);
  v_flow pgflow.flows;
  v_meta record;
  v_matches int;
begin
  select * into strict v_flow from pgflow.flows f where f.flow_slug = p_flow_slug;
  if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
     or exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
    raise exception 'Queue "%" of flow "%" is already used by another flow', v_queue, p_flow_slug
      using errcode = 'unique_violation';
  end if;

  select count(*) into v_matches from pgmq.meta m where lower(m.queue_name) = v_queue;
  if v_matches > 0 then
    perform pgflow._queue_meta_name(v_queue);  -- exactly one row and both tables, or an error
    select m.* into v_meta from pgmq.meta m where lower(m.queue_name) = v_queue;
    if exists (select 1 from pgflow.steps s where s.flow_slug = p_flow_slug and s.queue_name = v_queue)
       or v_meta.created_at = v_flow.created_at then
      return v_queue;
    end if;
    raise exception 'PGMQ queue "%" already exists but flow "%" did not create it; pgflow never adopts an existing queue. Drop or rename that queue, or use another flow slug',
      v_meta.queue_name, p_flow_slug
      using errcode = 'duplicate_object';
  end if;

  if to_regclass(format('pgmq.%I', 'q_' || v_queue)) is not null
     or to_regclass(format('pgmq.%I', 'a_' || v_queue)) is not null then
    raise exception 'PGMQ tables pgmq.q_% / pgmq.a_% exist without a pgmq.meta row; refusing to reuse them',
      v_queue, v_queue using errcode = 'duplicate_object';
  end if;
  -- Steps already route to the queue but it is gone: a recreated queue would restart message
  -- ids under the existing task snapshots (queue_name, message_id). Never recreate silently.
  if exists (select 1 from pgflow.steps s where s.flow_slug = p_flow_slug and s.queue_name = v_queue) then
    raise exception 'PGMQ queue "%" of flow "%" is missing although its steps route to it; pgflow does not recreate it under existing tasks. Restore it deliberately (pgmq.create) or use another flow slug',
      v_queue, p_flow_slug using errcode = 'undefined_object';
  end if;

  begin
    perform pgmq.create(v_queue);
  exception when unique_violation then
    -- Another session created the same tables and committed while this one waited for them.
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', v_queue
      using errcode = 'duplicate_object';
  end;
  -- pgmq.create() is idempotent: make sure this transaction created the queue (its meta row
  -- carries this transaction's start time; a concurrent creator's row does not), and that no
  -- alias row appeared for the same tables meanwhile.
  select count(*) into v_matches from pgmq.meta m where lower(m.queue_name) = v_queue;
  if v_matches <> 1 or not exists (
       select 1 from pgmq.meta m where m.queue_name = v_queue and m.created_at = now()) then
    raise exception 'PGMQ queue "%" was created concurrently by someone else; refusing to adopt it', v_queue
      using errcode = 'duplicate_object';
  end if;
  return v_queue;
end;
$$;

-- ===========================================================================================
-- Definition API
-- ===========================================================================================

-- Creates only the flow definition (no queue: the compiler and add_step provision it).
-- Idempotent for an existing flow (options unchanged).
create or replace function pgflow.create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null
) returns pgflow.flows
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_problem text := pgflow._slug_problem(create_flow.flow_slug);
  v_other text;
begin
  perform pgflow._lock_flow_definition(create_flow.flow_slug);
  select * into v_flow from pgflow.flows f where f.flow_slug = create_flow.flow_slug;
  if found then
    return v_flow;
  end if;

  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', create_flow.flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(create_flow.flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      create_flow.flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  select f.flow_slug into v_other from pgflow.flows f
  where lower(f.flow_slug) = lower(create_flow.flow_slug);
  if found then
    raise exception 'Flow slug "%" differs only in case from existing flow "%"; flow slugs must be unique ignoring case',
      create_flow.flow_slug, v_other using errcode = 'unique_violation';
  end if;
  select m.queue_name into v_other from pgmq.meta m
  where lower(m.queue_name) = lower(create_flow.flow_slug);
  if found then
    raise exception 'PGMQ queue "%" already exists; pgflow never adopts an existing queue for a new flow "%". Drop or rename that queue, or use another flow slug',
      v_other, create_flow.flow_slug using errcode = 'duplicate_object';
  end if;

  insert into pgflow.flows (flow_slug, opt_max_attempts, opt_base_delay, opt_timeout)
  values (create_flow.flow_slug, coalesce(max_attempts, 3), coalesce(base_delay, 5),
          coalesce(timeout, 60))
  returning * into v_flow;
  return v_flow;
end;
$$;

-- Adds a step routed to the flow's generated queue (provisioned through the shared,
-- ownership-checked path). Re-calls follow 0001's rules.
create or replace function pgflow.add_step(
  flow_slug text,
  step_slug text,
  deps_slugs text[] default '{}',
  max_attempts int default null,
  base_delay int default null,
  timeout int default null,
  start_delay int default null,
  step_type text default 'single',
  required_input_pattern jsonb default null,
  forbidden_input_pattern jsonb default null,
  when_unmet text default 'skip',
  when_exhausted text default 'fail'
) returns pgflow.steps
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_type text := coalesce(add_step.step_type, 'single');
  v_deps text[] := array(select distinct d from unnest(coalesce(deps_slugs, '{}')) d order by d);
  v_existing pgflow.steps;
  v_existing_deps text[];
  v_problem text := pgflow._slug_problem(add_step.step_slug);
  v_other text;
  v_queue text;
  v_step pgflow.steps;
begin
  if v_type = 'map' and cardinality(v_deps) > 1 then
    raise exception 'Map step "%" can have at most one dependency, but % were provided: %',
      add_step.step_slug, cardinality(v_deps), array_to_string(v_deps, ', ');
  end if;

  perform pgflow._lock_flow_definition(add_step.flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = add_step.flow_slug) then
    raise exception 'Flow "%" does not exist; create it with pgflow.create_flow() first',
      add_step.flow_slug using errcode = 'foreign_key_violation', constraint = 'steps_flow_slug_fkey';
  end if;

  select * into v_existing from pgflow.steps s
  where s.flow_slug = add_step.flow_slug and s.step_slug = add_step.step_slug;
  if found then
    v_existing_deps := array(
      select d.dep_slug from pgflow.deps d
      where d.flow_slug = add_step.flow_slug and d.step_slug = add_step.step_slug
      order by d.dep_slug);
    if v_existing.step_type is distinct from v_type
       or v_existing_deps is distinct from v_deps
       or v_existing.required_input_pattern is distinct from add_step.required_input_pattern
       or v_existing.forbidden_input_pattern is distinct from add_step.forbidden_input_pattern
       or v_existing.when_unmet is distinct from add_step.when_unmet
       or v_existing.when_exhausted is distinct from add_step.when_exhausted then
      raise exception 'Step "%" already exists in flow "%" with a different definition; '
        'flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
        add_step.step_slug, add_step.flow_slug
        using errcode = 'unique_violation';
    end if;
    return v_existing;
  end if;

  if v_problem is not null then
    raise exception 'Invalid step slug "%" in flow "%": it %', add_step.step_slug,
      add_step.flow_slug, v_problem using errcode = 'check_violation', constraint = 'steps_step_slug_check';
  end if;
  select s.step_slug into v_other from pgflow.steps s
  where s.flow_slug = add_step.flow_slug and lower(s.step_slug) = lower(add_step.step_slug);
  if found then
    raise exception 'Step slug "%" differs only in case from step "%" of flow "%"; step slugs must be unique ignoring case',
      add_step.step_slug, v_other, add_step.flow_slug using errcode = 'unique_violation';
  end if;

  v_queue := pgflow._provision_flow_queue(add_step.flow_slug);

  insert into pgflow.steps (
    flow_slug, step_slug, step_type, step_index, deps_count,
    opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay,
    required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted, queue_name)
  values (
    add_step.flow_slug, add_step.step_slug, v_type,
    (select coalesce(max(s.step_index) + 1, 0) from pgflow.steps s
     where s.flow_slug = add_step.flow_slug),
    cardinality(v_deps),
    max_attempts, base_delay, timeout, start_delay,
    add_step.required_input_pattern, add_step.forbidden_input_pattern,
    add_step.when_unmet, add_step.when_exhausted, v_queue)
  returning * into v_step;

  insert into pgflow.deps (flow_slug, dep_slug, step_slug)
  select add_step.flow_slug, d, add_step.step_slug from unnest(v_deps) d;

  return v_step;
end;
$$;

-- Checks a whole definition before anything is written: the flow slug and every step slug
-- under the shared rules, no exact or case-only duplicate steps, dependencies on earlier steps
-- only, at most one dependency for a map, and a queue name PGMQ accepts.
create function pgflow._preflight_flow_shape(p_flow_slug text, p_shape jsonb) returns void
language plpgsql stable
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_problem text := pgflow._slug_problem(p_flow_slug);
  v_seen text[] := '{}';
  v_step jsonb;
  v_slug text;
  v_dep text;
begin
  perform pgflow._validate_flow_shape(p_shape);
  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', p_flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(p_flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      p_flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    v_slug := v_step->>'slug';
    v_problem := pgflow._slug_problem(v_slug);
    if v_problem is not null then
      raise exception 'Invalid step slug "%" in flow "%": it %', v_slug, p_flow_slug, v_problem
        using errcode = 'check_violation', constraint = 'steps_step_slug_check';
    end if;
    if lower(v_slug) = any(v_seen) then
      raise exception 'Step slug "%" of flow "%" is defined twice (slugs must be unique ignoring case)',
        v_slug, p_flow_slug using errcode = 'unique_violation';
    end if;
    for v_dep in select jsonb_array_elements_text(v_step->'dependencies') loop
      if not lower(v_dep) = any(v_seen) or v_dep is null then
        raise exception 'Step "%" of flow "%" depends on "%", which is not defined before it',
          v_slug, p_flow_slug, v_dep using errcode = 'foreign_key_violation';
      end if;
    end loop;
    v_seen := v_seen || lower(v_slug);
  end loop;
end;
$$;

-- The complete compiler: preflight the whole definition, persist the flow, provision its
-- generated queue (even for a flow without steps), then create the steps with their route.
create or replace function pgflow._create_flow_from_shape(p_flow_slug text, p_shape jsonb) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_step jsonb;
begin
  perform pgflow._preflight_flow_shape(p_flow_slug, p_shape);
  perform pgflow.create_flow(
    p_flow_slug,
    (p_shape->'options'->>'maxAttempts')::int,
    (p_shape->'options'->>'baseDelay')::int,
    (p_shape->'options'->>'timeout')::int);
  perform pgflow._provision_flow_queue(p_flow_slug);
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    perform pgflow.add_step(
      flow_slug => p_flow_slug,
      step_slug => v_step->>'slug',
      deps_slugs => array(select jsonb_array_elements_text(v_step->'dependencies')),
      max_attempts => (v_step->'options'->>'maxAttempts')::int,
      base_delay => (v_step->'options'->>'baseDelay')::int,
      timeout => (v_step->'options'->>'timeout')::int,
      start_delay => (v_step->'options'->>'startDelay')::int,
      step_type => v_step->>'stepType',
      required_input_pattern => case when (v_step->'requiredInputPattern'->>'defined')::boolean
        then v_step->'requiredInputPattern'->'value' end,
      forbidden_input_pattern => case when (v_step->'forbiddenInputPattern'->>'defined')::boolean
        then v_step->'forbiddenInputPattern'->'value' end,
      when_unmet => coalesce(v_step->>'whenUnmet', 'skip'),
      when_exhausted => coalesce(v_step->>'whenExhausted', 'fail'));
  end loop;
end;
$$;

-- Deletes a flow with all its runs and its private queues, in one transaction:
--   1. lock the flow identity; collect and validate its route (steps.queue_name and an owned
--      default queue), the task snapshots, the exact pgmq.meta spelling and both tables of
--      each queue, and that no other flow references them;
--   2. lock its runs (run_id order), like callbacks and recovery do;
--   3. delete runtime rows and step definitions, keeping the flow row and the validated names;
--   4. drop exactly those queues (with their archives) — no per-message archiving first;
--   5. delete the flow row last.
-- Anything missing, ambiguous, malformed or referenced elsewhere fails the whole deletion.
create or replace function pgflow.delete_flow_and_data(p_flow_slug text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_route text[];
  v_stray text;
  v_queue text;
  v_spellings text[] := '{}';
begin
  perform pgflow._lock_flow_definition(p_flow_slug);
  -- NO KEY UPDATE, not UPDATE: callbacks holding a run lock take FOR KEY SHARE on this row
  -- (foreign-key checks of step_states/step_tasks), so FOR UPDATE here would deadlock with
  -- them while this waits for their runs below.
  select * into v_flow from pgflow.flows f where f.flow_slug = p_flow_slug for no key update;
  if not found then
    raise exception 'Flow "%" does not exist', p_flow_slug using errcode = 'no_data_found';
  end if;

  v_route := array(select distinct s.queue_name from pgflow.steps s
                   where s.flow_slug = p_flow_slug order by 1);
  -- A flow without steps owns its default queue only if created together with the flow.
  if not lower(p_flow_slug) = any(v_route) and exists (
       select 1 from pgmq.meta m
       where lower(m.queue_name) = lower(p_flow_slug) and m.created_at = v_flow.created_at) then
    v_route := v_route || lower(p_flow_slug);
  end if;

  select t.queue_name into v_stray from pgflow.step_tasks t
  where t.flow_slug = p_flow_slug and not t.queue_name = any(v_route) limit 1;
  if found then
    raise exception 'Flow "%" has tasks in queue "%", which is not on its route; refusing to delete',
      p_flow_slug, v_stray using errcode = 'object_in_use';
  end if;
  foreach v_queue in array v_route loop
    if exists (select 1 from pgflow.steps s where s.queue_name = v_queue and s.flow_slug <> p_flow_slug)
       or exists (select 1 from pgflow.step_tasks t where t.queue_name = v_queue and t.flow_slug <> p_flow_slug) then
      raise exception 'Queue "%" of flow "%" is also referenced by another flow; refusing to drop it',
        v_queue, p_flow_slug using errcode = 'object_in_use';
    end if;
    v_spellings := v_spellings || pgflow._queue_meta_name(v_queue);
  end loop;

  perform 1 from pgflow.runs r where r.flow_slug = p_flow_slug order by r.run_id for update;
  delete from pgflow.step_tasks t where t.flow_slug = p_flow_slug;
  delete from pgflow.step_states s where s.flow_slug = p_flow_slug;
  delete from pgflow.runs r where r.flow_slug = p_flow_slug;
  delete from pgflow.deps d where d.flow_slug = p_flow_slug;
  delete from pgflow.steps s where s.flow_slug = p_flow_slug;
  foreach v_queue in array v_spellings loop
    perform pgmq.drop_queue(v_queue);
  end loop;
  delete from pgflow.flows f where f.flow_slug = p_flow_slug;
end;
$$;

-- ===========================================================================================
-- Worker protocol: versioned startup
-- ===========================================================================================

-- The worker protocol this database speaks. 2 = queue identity (claim_tasks, register_worker).
-- A worker compares it with its own before doing anything else.
create function pgflow.worker_protocol() returns int
language sql immutable parallel safe
set search_path = ''
as $$
  select 2
$$;

create function pgflow._require_worker_protocol(p_protocol int) returns void
language plpgsql immutable
set search_path = ''
as $$
begin
  if p_protocol is distinct from pgflow.worker_protocol() then
    raise exception 'pgflow: worker protocol % is not supported by this database (it speaks protocol %): %',
      coalesce(p_protocol::text, 'none'), pgflow.worker_protocol(),
      case when coalesce(p_protocol, 0) < pgflow.worker_protocol()
           then 'upgrade the worker (workers of pgflow 0.16.0 and older cannot run against queue identity)'
           else 'upgrade the database with `pgflow migrate`' end
      using errcode = 'feature_not_supported';
  end if;
end;
$$;

-- 0.16.0 workers start with track_worker_function(name) and ensure_flow_compiled(slug, shape):
-- both now refuse, so such a worker stops before it registers or polls.
create or replace function pgflow.track_worker_function(function_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._require_worker_protocol(null);
end;
$$;

create or replace function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb) returns jsonb
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._require_worker_protocol(null);
  return null;
end;
$$;

-- ... and registers with a plain INSERT into pgflow.workers without a protocol: refused with
-- the same protocol error (not a bare NOT NULL violation). register_worker passes its protocol.
create function pgflow._workers_require_protocol() returns trigger
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._require_worker_protocol(new.protocol);
  return new;
end;
$$;
create trigger workers_require_protocol before insert on pgflow.workers
  for each row execute function pgflow._workers_require_protocol();

-- Startup compilation for protocol-2 workers: as in 0001 (compiled / verified / recompiled in
-- local development / mismatch), through the complete compiler, and reporting the queue.
create function pgflow.ensure_flow_compiled(flow_slug text, shape jsonb, worker_protocol int)
returns jsonb
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_diffs text[];
  v_status text;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  perform pgflow._validate_flow_shape(shape);
  perform pgflow._lock_flow_definition(ensure_flow_compiled.flow_slug);

  if not exists (select 1 from pgflow.flows f where f.flow_slug = ensure_flow_compiled.flow_slug) then
    perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
    v_status := 'compiled';
    v_diffs := '{}';
  else
    v_diffs := pgflow._compare_flow_shapes(shape, pgflow._get_flow_shape(ensure_flow_compiled.flow_slug));
    if cardinality(v_diffs) = 0 then
      v_status := 'verified';
      -- Verifying also checks the generated queue is present and owned.
      perform pgflow._provision_flow_queue(ensure_flow_compiled.flow_slug);
      -- A flow without steps owns its queue only as "created together with the flow" (see
      -- _provision_flow_queue, delete_flow_and_data). If the queue of such a flow persisted
      -- earlier (create_flow alone) had to be provisioned just now, the definition is complete
      -- only now: record it, or the next verification would take the queue for a foreign one.
      update pgflow.flows f set created_at = now()
      where f.flow_slug = ensure_flow_compiled.flow_slug and f.created_at <> now()
        and not exists (select 1 from pgflow.steps s where s.flow_slug = f.flow_slug)
        and exists (select 1 from pgmq.meta m
                    where m.queue_name = lower(f.flow_slug) and m.created_at = now());
    elsif pgflow.is_local() then
      perform pgflow.delete_flow_and_data(ensure_flow_compiled.flow_slug);
      perform pgflow._create_flow_from_shape(ensure_flow_compiled.flow_slug, shape);
      v_status := 'recompiled';
    else
      v_status := 'mismatch';
    end if;
  end if;
  return jsonb_build_object('status', v_status, 'differences', to_jsonb(v_diffs),
                            'queue_name', lower(ensure_flow_compiled.flow_slug));
end;
$$;

-- Registers a protocol-2 worker for one flow on one queue, after compilation. Refuses a
-- worker function paused by a fatal claim (see resume_worker_function) and a queue that is not
-- on the flow's route.
create function pgflow.register_worker(worker_id uuid, function_name text, flow_slug text,
                                       queue_name text, worker_protocol int)
returns pgflow.workers
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_function pgflow.worker_functions;
  v_worker pgflow.workers;
begin
  perform pgflow._require_worker_protocol(worker_protocol);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = register_worker.flow_slug) then
    raise exception 'Flow "%" does not exist; compile it first (ensure_flow_compiled)',
      register_worker.flow_slug using errcode = 'no_data_found';
  end if;
  if register_worker.queue_name is distinct from lower(register_worker.flow_slug) then
    raise exception 'Queue "%" is not on the route of flow "%" (its queue is "%")',
      register_worker.queue_name, register_worker.flow_slug, lower(register_worker.flow_slug)
      using errcode = 'invalid_parameter_value';
  end if;

  insert into pgflow.worker_functions (function_name, updated_at)
  values (register_worker.function_name, clock_timestamp())
  on conflict (function_name) do update set updated_at = clock_timestamp()
  returning * into v_function;
  if v_function.paused_at is not null then
    raise exception 'Worker function "%" is paused since % (%); fix the cause, then run: select pgflow.resume_worker_function(''%'');',
      v_function.function_name, v_function.paused_at, v_function.pause_reason, v_function.function_name
      using errcode = 'object_not_in_prerequisite_state';
  end if;

  insert into pgflow.workers (worker_id, queue_name, function_name, protocol)
  values (register_worker.worker_id, register_worker.queue_name, register_worker.function_name,
          register_worker.worker_protocol)
  returning * into v_worker;
  return v_worker;
end;
$$;

-- Records a heartbeat; returns true when an operator deprecated the worker (it should stop
-- polling and drain).
create function pgflow.worker_heartbeat(worker_id uuid) returns boolean
language sql volatile
set search_path = ''
as $$
  update pgflow.workers w set last_heartbeat_at = clock_timestamp()
  where w.worker_id = worker_heartbeat.worker_id
  returning w.deprecated_at is not null
$$;

-- The operator command that lets a paused worker function start again.
create function pgflow.resume_worker_function(function_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
begin
  update pgflow.worker_functions w set paused_at = null, pause_reason = null, updated_at = clock_timestamp()
  where w.function_name = resume_worker_function.function_name;
  if not found then
    raise exception 'Worker function "%" does not exist', resume_worker_function.function_name
      using errcode = 'no_data_found';
  end if;
end;
$$;

-- ===========================================================================================
-- Queue-aware runtime: every PGMQ operation uses the task's queue snapshot
-- ===========================================================================================

-- Wakes idle workers of a queue: NOTIFY on channel "pgflow_queue:<queue_name>" (delivered at
-- commit; identical notifications of one transaction collapse into one). Sent when messages
-- become visible at once: a started step without start delay, a requeued task. Workers also
-- poll at an interval, which covers delayed visibility (retry backoff, start_delay).
create function pgflow._announce_work(p_queue_name text) returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pg_notify('pgflow_queue:' || p_queue_name, '');
end;
$$;

create or replace function pgflow._archive_task_message(p_run_id uuid, p_step_slug text,
                                                        p_task_index int)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_msg bigint;
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgmq.archive(v_queue, v_msg);
  end if;
end;
$$;

create or replace function pgflow._set_task_message_vt(p_run_id uuid, p_step_slug text,
                                                       p_task_index int, p_delay int)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text;
  v_msg bigint;
begin
  select t.queue_name, t.message_id into v_queue, v_msg
  from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index;
  if v_msg is not null then
    perform pgmq.set_vt(v_queue, v_msg, p_delay);
    if p_delay = 0 then
      perform pgflow._announce_work(v_queue);
    end if;
  end if;
end;
$$;

-- Terminates unfinished tasks and archives their messages, one batch per queue.
create or replace function pgflow._terminate_tasks(p_run_id uuid, p_step_slugs text[], p_status text)
returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_batch record;
begin
  for v_batch in
    with terminated as (
      update pgflow.step_tasks t
      set status = p_status
      where t.run_id = p_run_id
        and (p_step_slugs is null or t.step_slug = any(p_step_slugs))
        and t.status in ('queued', 'started')
      returning t.queue_name, t.message_id)
    select x.queue_name, array_agg(x.message_id order by x.message_id) as ids
    from terminated x
    where x.message_id is not null
    group by x.queue_name
    order by x.queue_name
  loop
    perform pgmq.archive(v_batch.queue_name, v_batch.ids);
  end loop;
end;
$$;

-- Starts ready steps: each step's messages go to the step's queue, and every task row
-- snapshots that queue. No queue DDL happens here.
create or replace function pgflow.start_ready_steps(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_step record;
begin
  select * into v_run from pgflow.runs r where r.run_id = start_ready_steps.run_id;
  if not found or v_run.status <> 'started' then
    return;
  end if;

  for v_step in
    with ready as (
      select ss.step_slug
      from pgflow.step_states ss
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and ss.initial_tasks > 0
      order by ss.step_slug
      for update),
    started as (
      update pgflow.step_states ss
      set status = 'started', started_at = now(), remaining_tasks = ss.initial_tasks
      from ready
      where ss.run_id = v_run.run_id and ss.step_slug = ready.step_slug
      returning ss.*)
    select st.*, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name
    from started st
    join pgflow.steps s on s.flow_slug = st.flow_slug and s.step_slug = st.step_slug
    order by st.step_slug
  loop
    perform pgflow._emit(jsonb_build_object(
      'event_type', 'step:started', 'run_id', v_run.run_id, 'step_slug', v_step.step_slug,
      'status', 'started', 'started_at', v_step.started_at,
      'remaining_tasks', v_step.remaining_tasks, 'remaining_deps', v_step.remaining_deps),
      'step:' || v_step.step_slug || ':started', v_run.flow_slug);

    -- send_batch returns the ids in message order, so ordinality pairs id and task index.
    insert into pgflow.step_tasks (flow_slug, run_id, step_slug, task_index, message_id, queue_name)
    select v_run.flow_slug, v_run.run_id, v_step.step_slug, (m.n - 1)::int, m.msg_id,
           v_step.queue_name
    from pgmq.send_batch(
           v_step.queue_name,
           array(select jsonb_build_object('flow_slug', v_run.flow_slug, 'run_id', v_run.run_id,
                                           'step_slug', v_step.step_slug, 'task_index', i)
                 from generate_series(0, v_step.initial_tasks - 1) i order by i),
           v_step.start_delay) with ordinality as m(msg_id, n);
    if v_step.start_delay = 0 then
      perform pgflow._announce_work(v_step.queue_name);
    end if;
  end loop;
end;
$$;

-- ===========================================================================================
-- The queue-aware claim boundary
-- ===========================================================================================

-- How claim_tasks classified one message (internal).
create type pgflow._claim_item as (
  msg_id bigint, class text, reason text, run_id uuid, step_slug text, task_index int,
  deadline timestamptz);

-- One row per message of a claimed batch.
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

-- Claims a batch of messages a worker read from `queue_name` for `flow_slug`.
--
-- The worker's subscription (registered worker, queue on the flow's route) is validated
-- first; then every message is looked up by (queue_name, message_id) and the complete batch is
-- classified before anything changes. Without a fatal message, one transaction claims the
-- eligible tasks (visible again after the step's effective timeout + 2 s), defers running ones,
-- and archives finished or clearly foreign messages. With any fatal message — pgflow-shaped
-- work whose task is missing or on another route — nothing is claimed or archived: the whole
-- batch is made visible again, the worker's function is paused (pgflow.worker_functions), and
-- the fatal outcome is returned (not raised, so the reset and the pause commit). A message is
-- "clearly foreign" only when its body carries none of pgflow's address keys (flow_slug,
-- run_id, step_slug, task_index); anything else without a matching task is fatal.
-- Applications must not send messages to pgflow-owned queues.
create function pgflow.claim_tasks(queue_name text, flow_slug text, msg_ids bigint[], worker_id uuid)
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text := lower(claim_tasks.queue_name);
  v_worker pgflow.workers;
  v_ids bigint[] := array(select distinct i from unnest(msg_ids) i where i is not null order by i);
  v_body_ids bigint[];
  v_bodies jsonb[];
  v_fatal int;
  v_claim bigint[];
  v_defer bigint[];
  v_defer_offsets int[];
  v_archive bigint[];
  v_visible int;
  v_items pgflow._claim_item[];
begin
  -- 1. The subscription, before judging any message.
  select * into v_worker from pgflow.workers w where w.worker_id = claim_tasks.worker_id;
  if not found then
    raise exception 'Worker % is not registered (register_worker)', claim_tasks.worker_id
      using errcode = 'no_data_found';
  end if;
  if v_worker.queue_name is distinct from v_queue then
    raise exception 'Worker % is registered for queue "%", not "%"', claim_tasks.worker_id,
      v_worker.queue_name, v_queue using errcode = 'invalid_parameter_value';
  end if;
  if not exists (select 1 from pgflow.flows f where f.flow_slug = claim_tasks.flow_slug) then
    -- e.g. deleted while the worker polled
    raise exception 'Flow "%" does not exist', claim_tasks.flow_slug using errcode = 'no_data_found';
  end if;
  if lower(claim_tasks.flow_slug) <> v_queue then
    raise exception 'Queue "%" is not on the route of flow "%"', v_queue, claim_tasks.flow_slug
      using errcode = 'invalid_parameter_value';
  end if;
  if cardinality(v_ids) = 0 then
    return;
  end if;

  -- 2. Lock order: the runs behind the batch (shared, run_id order), then tasks, then messages.
  -- (One index probe per message id: a plan that scans the queue's tasks and filters by id
  -- would read every task the queue ever had.)
  perform 1 from pgflow.runs r
  where r.run_id in (select t.run_id
                     from unnest(v_ids) as m(id)
                     cross join lateral (select t.run_id from pgflow.step_tasks t
                                         where t.queue_name = v_queue and t.message_id = m.id
                                         limit 1) t)
  order by r.run_id
  for share;

  -- Bodies are judged only for messages without a task (foreign or unsupported work); the
  -- usual batch has none, and then no dynamic statement is needed.
  v_body_ids := array(select m.id from unnest(v_ids) as m(id)
                      where not exists (select 1 from pgflow.step_tasks t
                                        where t.queue_name = v_queue and t.message_id = m.id));
  if cardinality(v_body_ids) > 0 then
    execute format('select array_agg(q.msg_id), array_agg(q.message) from pgmq.%I q where q.msg_id = any($1)',
                   'q_' || v_queue)
    into v_body_ids, v_bodies using v_body_ids;
  end if;

  -- 3. Classify the complete batch.
  select array_agg(row(
    m.id,
    case
      when t.run_id is not null and t.flow_slug <> claim_tasks.flow_slug then 'fatal'
      when t.status = 'queued' and r.status = 'started' and ss.status = 'started' then 'claim'
      when t.status = 'queued' then 'fatal'
      when t.status = 'started' then 'defer'
      when t.run_id is not null then 'archive'
      when b.msg_id is null then 'gone'
      when jsonb_typeof(b.message) = 'object'
           and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index'] then 'fatal'
      else 'archive'
    end,
    case
      when t.run_id is not null and t.flow_slug <> claim_tasks.flow_slug
        then format('its task belongs to flow "%s", not to this worker''s flow', t.flow_slug)
      when t.status = 'queued' and r.status = 'started' and ss.status = 'started' then null
      when t.status = 'queued'
        then format('its task is queued but its run is %s and its step %s (inconsistent state)', r.status, ss.status)
      when t.status = 'started' then 'its task is already running'
      when t.run_id is not null then format('its task is %s', t.status)
      when b.msg_id is null then 'no such message'
      when jsonb_typeof(b.message) = 'object'
           and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index']
        then 'it looks like pgflow work but no task has this (queue, message id)'
      else 'foreign message without a pgflow task address'
    end,
    t.run_id, t.step_slug, t.task_index,
    t.started_at + make_interval(secs => coalesce(s.opt_timeout, f.opt_timeout) + 30)
  )::pgflow._claim_item order by m.id)
  into v_items
  from unnest(v_ids) as m(id)
  left join lateral (select t.* from pgflow.step_tasks t
                     where t.queue_name = v_queue and t.message_id = m.id limit 1) t on true
  left join pgflow.runs r on r.run_id = t.run_id
  left join pgflow.step_states ss on ss.run_id = t.run_id and ss.step_slug = t.step_slug
  left join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  left join pgflow.flows f on f.flow_slug = t.flow_slug
  left join unnest(v_body_ids, v_bodies) as b(msg_id, message) on b.msg_id = m.id;

  select count(*) into v_fatal from unnest(v_items) c where c.class = 'fatal';

  -- 4a. A fatal batch: reset visibility of every message read, pause the worker's function,
  --     change nothing else, and say so.
  if v_fatal > 0 then
    perform pgflow.set_vt_batch(v_queue, v_ids, array_fill(0, array[cardinality(v_ids)]));
    update pgflow.worker_functions w
    set paused_at = clock_timestamp(),
        pause_reason = format('fatal claim on queue "%s": unsupported message(s) %s', v_queue,
          (select string_agg(c.msg_id::text, ', ' order by c.msg_id)
           from unnest(v_items) c where c.class = 'fatal')),
        updated_at = clock_timestamp()
    where w.function_name = v_worker.function_name;
    return query
    select case when c.class = 'fatal' then 'fatal' else 'reset' end, v_queue, c.msg_id,
           null::text, null::uuid, null::text, null::int, null::int, null::jsonb, null::jsonb,
           c.reason, null::int
    from unnest(v_items) c order by c.msg_id;
    return;
  end if;

  -- 4b. Claim the eligible tasks (only rows this call changes are the worker's).
  with claimed as (
    update pgflow.step_tasks t
    -- greatest(): a task committed after this transaction began is queued "later" than now().
    set status = 'started', attempts_count = t.attempts_count + 1,
        started_at = greatest(now(), t.queued_at),
        last_worker_id = claim_tasks.worker_id
    from unnest(v_items) c
    where c.class = 'claim' and t.run_id = c.run_id and t.step_slug = c.step_slug
      and t.task_index = c.task_index and t.status = 'queued'
    returning t.message_id)
  select array_agg(x.message_id order by x.message_id) into v_claim from claimed x;
  v_items := array(
    select case when c.class = 'claim' and not c.msg_id = any(coalesce(v_claim, '{}'))
             then row(c.msg_id, 'taken', 'claimed by another worker meanwhile', c.run_id,
                      c.step_slug, c.task_index, c.deadline)::pgflow._claim_item
             else c end
    from unnest(v_items) c order by c.msg_id);

  if v_claim is not null then
    select count(*) into v_visible
    from pgflow.set_vt_batch(v_queue, v_claim, array(
      select coalesce(s.opt_timeout, f.opt_timeout) + 2
      from unnest(v_claim) with ordinality as k(id, n)
      join unnest(v_items) c on c.msg_id = k.id
      join pgflow.steps s on s.flow_slug = claim_tasks.flow_slug and s.step_slug = c.step_slug
      join pgflow.flows f on f.flow_slug = claim_tasks.flow_slug
      order by k.n));
    if v_visible <> cardinality(v_claim) then
      raise exception 'claim_tasks(): visibility updated % of % claimed messages',
        v_visible, cardinality(v_claim);
    end if;
  end if;

  -- 4c. Defer running tasks to their recovery deadline (not a fresh timeout per read).
  select array_agg(c.msg_id order by c.msg_id),
         array_agg(greatest(ceil(extract(epoch from c.deadline - clock_timestamp()))::int, 5)
                   order by c.msg_id)
  into v_defer, v_defer_offsets
  from unnest(v_items) c where c.class = 'defer';
  if v_defer is not null then
    perform pgflow.set_vt_batch(v_queue, v_defer, v_defer_offsets);
  end if;

  -- 4d. Archive messages of finished tasks and clearly foreign messages.
  select array_agg(c.msg_id order by c.msg_id) into v_archive
  from unnest(v_items) c where c.class = 'archive';
  if v_archive is not null then
    perform pgmq.archive(v_queue, v_archive);
  end if;

  return query
  select case c.class when 'claim' then 'claimed' when 'defer' then 'deferred'
                      when 'archive' then 'archived' else c.class end,
         v_queue, c.msg_id, t.flow_slug, t.run_id, t.step_slug, t.task_index,
         case when c.class = 'claim' then t.attempts_count end,
         case when c.class <> 'claim' then null
           when s.step_type = 'map' and s.deps_count = 0 then r.input -> t.task_index
           when s.step_type = 'map' then (
             select ds.output -> t.task_index
             from pgflow.deps d
             join pgflow.step_states ds on ds.run_id = t.run_id and ds.step_slug = d.dep_slug
             where d.flow_slug = t.flow_slug and d.step_slug = t.step_slug)
           when s.deps_count = 0 then '{}'::jsonb
           else coalesce((
             select jsonb_object_agg(d.dep_slug, ds.output)
             from pgflow.deps d
             join pgflow.step_states ds on ds.run_id = t.run_id and ds.step_slug = d.dep_slug
             where d.flow_slug = t.flow_slug and d.step_slug = t.step_slug
               and ds.status = 'completed'), '{}'::jsonb)
         end,
         case when c.class = 'claim' and s.step_type = 'single' and s.deps_count = 0 then r.input end,
         c.reason,
         case when c.class = 'claim' then coalesce(s.opt_timeout, f.opt_timeout) end
  from unnest(v_items) c
  left join pgflow.step_tasks t on t.run_id = c.run_id and t.step_slug = c.step_slug
                               and t.task_index = c.task_index
  left join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  left join pgflow.flows f on f.flow_slug = t.flow_slug
  left join pgflow.runs r on r.run_id = t.run_id
  order by c.msg_id;
end;
$$;

-- The 0.16.0 claim signature, kept for SQL callers: claims from the flow's canonical default
-- queue through claim_tasks and returns the claimed tasks.
create or replace function pgflow.start_tasks(flow_slug text, msg_ids bigint[], worker_id uuid)
returns setof pgflow.step_task_record
language sql volatile
set search_path = ''
as $$
  select c.flow_slug, c.run_id, c.step_slug, c.input, c.msg_id, c.task_index, c.flow_input
  from pgflow.claim_tasks(lower(start_tasks.flow_slug), start_tasks.flow_slug,
                          start_tasks.msg_ids, start_tasks.worker_id) c
  where c.outcome = 'claimed'
$$;
