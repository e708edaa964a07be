-- pgflow SQL core, 0003: the core reorganised for reading, with no change in behaviour.
--
--   * Event payloads are built in one place: _emit_run_event(run) and _emit_step_event(step
--     state) build upstream's payload for the row's status (_emit_step_events publishes
--     several steps in order); every state change calls them instead of building its own.
--   * claim_tasks classifies its batch through _classify_claim_batch, where each (class,
--     reason) comes from one ordered rule table instead of two parallel CASE expressions,
--     and refuses a fatal batch through _refuse_claim_batch.
--   * complete_task's type-violation branch is _fail_type_violation (off the hot path).
--
-- Functions only: no table, no data, no lock beyond what CREATE OR REPLACE FUNCTION takes.
-- Applied by the pgflow migration runner in one transaction. Immutable once released.
-- Generated from sql/schema/ with scripts/sql-schema next-migration (sql/README.md).



-- ---- sql/schema/functions/runtime/_cascade_force_skip_steps.sql
-- Skips the step and all its transitive dependents that are still created or started, ends
-- their tasks as `skipped` and archives their messages (in every task queue). Returns how
-- many steps it skipped (0 when called again).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (skip-cascade), _fail_task (when_exhausted skip-cascade).
create or replace function pgflow._cascade_force_skip_steps(run_id uuid, step_slug text, skip_reason text)
returns int
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_flow text;
  v_slugs text[];
begin
  select r.flow_slug into v_flow from pgflow.runs r where r.run_id = _cascade_force_skip_steps.run_id;
  if not found then
    raise exception 'Run not found: %', _cascade_force_skip_steps.run_id using errcode = 'no_data_found';
  end if;

  with recursive affected(slug) as (
    select _cascade_force_skip_steps.step_slug
    union
    select d.step_slug from pgflow.deps d join affected a on d.dep_slug = a.slug
    where d.flow_slug = v_flow)
  select array_agg(ss.step_slug order by s.step_index) into v_slugs
  from pgflow.step_states ss
  join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
  where ss.run_id = _cascade_force_skip_steps.run_id
    and ss.step_slug in (select a.slug from affected a)
    and ss.status in ('created', 'started');
  if v_slugs is null then
    return 0;
  end if;

  update pgflow.step_states ss
  set status = 'skipped', skipped_at = now(), remaining_tasks = null,
      skip_reason = case when ss.step_slug = _cascade_force_skip_steps.step_slug
                         then _cascade_force_skip_steps.skip_reason else 'dependency_skipped' end
  where ss.run_id = _cascade_force_skip_steps.run_id and ss.step_slug = any(v_slugs);

  perform pgflow._emit_step_events(_cascade_force_skip_steps.run_id, v_slugs);

  perform pgflow._terminate_tasks(_cascade_force_skip_steps.run_id, v_slugs, 'skipped');
  update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
  where r.run_id = _cascade_force_skip_steps.run_id;
  return cardinality(v_slugs);
end;
$$;

-- ---- sql/schema/functions/claims/_classify_claim_batch.sql
-- Classifies every message of a claim batch, changing nothing. Each message is looked up by
-- (queue_name, message_id); its body is read only when no task has that identity. The first
-- rule that applies decides:
--   fatal    its task belongs to another flow (wrong route)
--   claim    its task is queued in a started step of a started run
--   fatal    its task is queued but its run or step is not started (inconsistent state)
--   defer    its task is already running (deadline: when stall recovery would take it)
--   archive  its task is finished or can never run
--   gone     no such message and no task
--   fatal    the body carries a pgflow task address (flow_slug, run_id, step_slug or
--            task_index) but no task has this identity: pgflow work this worker cannot judge
--   archive  anything else: clearly not pgflow's
-- Returns the items in msg_id order.
-- Locks: the runs behind the batch FOR SHARE, in run_id order (lock order position 2), so
-- their state cannot change before the claim commits.
-- Called by: claim_tasks.
create or replace function pgflow._classify_claim_batch(p_queue_name text, p_flow_slug text,
                                                        p_msg_ids bigint[])
returns pgflow._claim_item[]
language plpgsql volatile
set search_path = ''
as $$
declare
  v_body_ids bigint[];
  v_bodies jsonb[];
  v_items pgflow._claim_item[];
begin
  -- (One index probe per message id: a plan that scans the queue's tasks and filters by id
  -- would read every task the queue ever had.)
  perform 1 from pgflow.runs r
  where r.run_id in (select t.run_id
                     from unnest(p_msg_ids) as m(id)
                     cross join lateral (select t.run_id from pgflow.step_tasks t
                                         where t.queue_name = p_queue_name and t.message_id = m.id
                                         limit 1) t)
  order by r.run_id
  for share;

  -- Bodies are judged only for messages without a task (foreign or unsupported work); the
  -- usual batch has none, and then no dynamic statement is needed.
  v_body_ids := array(select m.id from unnest(p_msg_ids) as m(id)
                      where not exists (select 1 from pgflow.step_tasks t
                                        where t.queue_name = p_queue_name and t.message_id = m.id));
  if cardinality(v_body_ids) > 0 then
    execute format('select array_agg(q.msg_id), array_agg(q.message) from pgmq.%I q where q.msg_id = any($1)',
                   'q_' || p_queue_name)
    into v_body_ids, v_bodies using v_body_ids;
  end if;

  select array_agg(row(m.id, rule.class, rule.reason, t.run_id, t.step_slug, t.task_index,
                       t.started_at + make_interval(secs => coalesce(s.opt_timeout, f.opt_timeout) + 30)
                   )::pgflow._claim_item order by m.id)
  into v_items
  from unnest(p_msg_ids) as m(id)
  left join lateral (select t.* from pgflow.step_tasks t
                     where t.queue_name = p_queue_name and t.message_id = m.id limit 1) t on true
  left join pgflow.runs r on r.run_id = t.run_id
  left join pgflow.step_states ss on ss.run_id = t.run_id and ss.step_slug = t.step_slug
  left join pgflow.steps s on s.flow_slug = t.flow_slug and s.step_slug = t.step_slug
  left join pgflow.flows f on f.flow_slug = t.flow_slug
  left join unnest(v_body_ids, v_bodies) as b(msg_id, message) on b.msg_id = m.id
  cross join lateral (
    select v.class, v.reason
    from (values
      (1, t.run_id is not null and t.flow_slug <> p_flow_slug, 'fatal',
          format('its task belongs to flow "%s", not to this worker''s flow', t.flow_slug)),
      (2, t.status = 'queued' and r.status = 'started' and ss.status = 'started', 'claim', null),
      (3, t.status = 'queued', 'fatal',
          format('its task is queued but its run is %s and its step %s (inconsistent state)',
                 r.status, ss.status)),
      (4, t.status = 'started', 'defer', 'its task is already running'),
      (5, t.run_id is not null, 'archive', format('its task is %s', t.status)),
      (6, b.msg_id is null, 'gone', 'no such message'),
      (7, jsonb_typeof(b.message) = 'object'
          and b.message ?| array['flow_slug', 'run_id', 'step_slug', 'task_index'],
          'fatal', 'it looks like pgflow work but no task has this (queue, message id)'),
      (8, true, 'archive', 'foreign message without a pgflow task address')
    ) as v(rank, applies, class, reason)
    where v.applies
    order by v.rank
    limit 1) rule;
  return v_items;
end;
$$;

-- ---- sql/schema/functions/events/_emit_run_event.sql
-- Publishes a run's current status as run:<status>, with upstream's payload for it:
--   run:started    flow_slug, input, remaining_steps, started_at
--   run:completed  flow_slug, output, completed_at
--   run:failed     flow_slug, failed_at, and error_message when one is given (a type
--                  violation fails the run without one, as upstream)
-- The one place run event payloads are built.
-- Called by: start_flow, maybe_complete_run, _fail_run.
create or replace function pgflow._emit_run_event(p_run pgflow.runs, p_error_message text default null)
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'run:' || p_run.status, 'run_id', p_run.run_id,
                       'flow_slug', p_run.flow_slug, 'status', p_run.status)
      || case p_run.status
           when 'started' then jsonb_build_object('input', p_run.input,
                                                  'remaining_steps', p_run.remaining_steps,
                                                  'started_at', p_run.started_at)
           when 'completed' then jsonb_build_object('output', p_run.output,
                                                    'completed_at', p_run.completed_at)
           else jsonb_build_object('failed_at', p_run.failed_at)
                || case when p_error_message is null then '{}'::jsonb
                        else jsonb_build_object('error_message', p_error_message) end
         end,
    'run:' || p_run.status, p_run.flow_slug);
end;
$$;

-- ---- sql/schema/functions/events/_emit_step_event.sql
-- Publishes a step's current status as step:<slug>:<status>, with upstream's payload for it:
--   step:started    started_at, remaining_tasks, remaining_deps
--   step:completed  output, completed_at; a taskless step (initial_tasks = 0, completed
--                   without tasks) also started_at, remaining_tasks and remaining_deps
--   step:failed     error_message, failed_at
--   step:skipped    skip_reason, skipped_at, and flow_slug; a step skipped because its
--                   handler failed carries error_message instead of flow_slug (as upstream)
-- The one place step event payloads are built.
-- Called by: start_ready_steps, complete_task, _fail_type_violation, _fail_task,
-- cascade_resolve_conditions, _emit_step_events.
create or replace function pgflow._emit_step_event(p_state pgflow.step_states)
returns void
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow._emit(
    jsonb_build_object('event_type', 'step:' || p_state.status, 'run_id', p_state.run_id,
                       'step_slug', p_state.step_slug, 'status', p_state.status)
      || case p_state.status
           when 'started' then jsonb_build_object('started_at', p_state.started_at,
                                                  'remaining_tasks', p_state.remaining_tasks,
                                                  'remaining_deps', p_state.remaining_deps)
           when 'completed' then jsonb_build_object('output', p_state.output,
                                                    'completed_at', p_state.completed_at)
                || case when p_state.initial_tasks = 0
                        then jsonb_build_object('started_at', p_state.started_at,
                                                'remaining_tasks', p_state.remaining_tasks,
                                                'remaining_deps', p_state.remaining_deps)
                        else '{}'::jsonb end
           when 'failed' then jsonb_build_object('error_message', p_state.error_message,
                                                 'failed_at', p_state.failed_at)
           else jsonb_build_object('skip_reason', p_state.skip_reason,
                                   'skipped_at', p_state.skipped_at)
                || case when p_state.error_message is null
                        then jsonb_build_object('flow_slug', p_state.flow_slug)
                        else jsonb_build_object('error_message', p_state.error_message) end
         end,
    'step:' || p_state.step_slug || ':' || p_state.status, p_state.flow_slug);
end;
$$;

-- ---- sql/schema/functions/events/_emit_step_events.sql
-- Publishes the current status of several steps of one run, in the order given (event order
-- is part of the contract: a parent's event before its dependents').
-- Called by: cascade_resolve_conditions, cascade_complete_taskless_steps, _cascade_force_skip_steps.
create or replace function pgflow._emit_step_events(p_run_id uuid, p_step_slugs text[])
returns void
language plpgsql volatile
set search_path = ''
as $$
declare
  v_state pgflow.step_states;
begin
  for v_state in
    select ss.* from pgflow.step_states ss
    join unnest(p_step_slugs) with ordinality u(slug, n) on ss.step_slug = u.slug
    where ss.run_id = p_run_id order by u.n
  loop
    perform pgflow._emit_step_event(v_state);
  end loop;
end;
$$;

-- ---- sql/schema/functions/runtime/_fail_run.sql
-- Fails a started run: status, run:failed event, and every unfinished task cancelled (their
-- messages archived).
-- Locks: the caller holds the run.
-- Called by: cascade_resolve_conditions (a `fail` condition), complete_task (type violation),
-- _fail_task (when_exhausted fail).
create or replace function pgflow._fail_run(p_run_id uuid, p_error_message text) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r set status = 'failed', failed_at = now()
  where r.run_id = p_run_id and r.status = 'started'
  returning * into v_run;
  if not found then
    return;
  end if;
  perform pgflow._emit_run_event(v_run, p_error_message);
  perform pgflow._terminate_tasks(p_run_id, null, 'cancelled');
end;
$$;

-- ---- sql/schema/functions/runtime/_fail_task.sql
-- The failure path shared by fail_task and stall recovery. Retries with backoff while attempts
-- remain, unless `p_exhaust` treats this attempt as the last one; then applies the step's
-- when_exhausted mode (fail the step and the run, skip the step, or skip it with everything
-- downstream).
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: fail_task, requeue_stalled_tasks.
create or replace function pgflow._fail_task(p_run_id uuid, p_step_slug text, p_task_index int,
                                  p_error_message text, p_exhaust boolean)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_flow pgflow.flows;
  v_max_attempts int;
  v_base_delay int;
begin
  select * into v_run from pgflow.runs r where r.run_id = p_run_id for update;
  if not found then
    return;
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = p_run_id and ss.step_slug = p_step_slug for update;
  select * into v_task from pgflow.step_tasks t
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
  for update;
  if not found then
    return;
  end if;

  if v_run.status <> 'started' or v_state.status <> 'started' then
    perform pgflow._archive_task_message(p_run_id, p_step_slug, p_task_index);
    return next v_task;
    return;
  end if;
  -- Only a started task fails: a queued task (already retried) keeps its backoff.
  if v_task.status <> 'started' then
    return next v_task;
    return;
  end if;

  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = p_step_slug;
  select * into v_flow from pgflow.flows f where f.flow_slug = v_run.flow_slug;
  v_max_attempts := coalesce(v_step.opt_max_attempts, v_flow.opt_max_attempts);
  v_base_delay := coalesce(v_step.opt_base_delay, v_flow.opt_base_delay);

  if not p_exhaust and v_task.attempts_count < v_max_attempts then
    update pgflow.step_tasks t
    set status = 'queued', started_at = null, error_message = p_error_message
    where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
    returning * into v_task;
    perform pgflow._set_task_message_vt(p_run_id, p_step_slug, p_task_index,
                                        pgflow.calculate_retry_delay(v_base_delay, v_task.attempts_count));
    return next v_task;
    return;
  end if;

  update pgflow.step_tasks t
  set status = 'failed', failed_at = now(), error_message = p_error_message
  where t.run_id = p_run_id and t.step_slug = p_step_slug and t.task_index = p_task_index
  returning * into v_task;

  if v_step.when_exhausted = 'fail' then
    update pgflow.step_states ss
    set status = 'failed', failed_at = now(), error_message = p_error_message
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    perform pgflow._emit_step_event(v_state);
    perform pgflow._fail_run(p_run_id, p_error_message);
  else
    update pgflow.step_states ss
    set status = 'skipped', skip_reason = 'handler_failed', skipped_at = now(),
        error_message = p_error_message, remaining_tasks = null
    where ss.run_id = p_run_id and ss.step_slug = p_step_slug
    returning * into v_state;
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = p_run_id;
    perform pgflow._terminate_tasks(p_run_id, array[p_step_slug], 'skipped');
    perform pgflow._emit_step_event(v_state);
    if v_step.when_exhausted = 'skip-cascade' then
      perform pgflow._cascade_force_skip_steps(p_run_id, p_step_slug, 'handler_failed');
    else
      perform pgflow._release_children(p_run_id, v_run.flow_slug, array[p_step_slug], 0, true);
    end if;
    perform pgflow._advance_run(p_run_id);
  end if;

  perform pgflow._archive_task_message(p_run_id, p_step_slug, p_task_index);
  return next v_task;
end;
$$;

-- ---- sql/schema/functions/runtime/_fail_type_violation.sql
-- Upstream's [TYPE_VIOLATION]: a single step produced something other than an array for a
-- dependent map whose task count is still unknown. The task fails with the bad output stored,
-- the run fails (run:failed without an error message, its other tasks cancelled), then the
-- step fails (step:failed), and the task's message is archived. when_exhausted does not apply:
-- a type violation is never retried or skipped. Returns the task row.
-- Locks: the caller holds the run, the step state and the task (complete_task).
-- Called by: complete_task.
create or replace function pgflow._fail_type_violation(p_run pgflow.runs, p_task pgflow.step_tasks,
                                                       p_map_step text, p_output jsonb)
returns pgflow.step_tasks
language plpgsql volatile
set search_path = ''
as $$
declare
  v_type text := coalesce(jsonb_typeof(p_output), 'null');
  v_task pgflow.step_tasks;
  v_state pgflow.step_states;
begin
  update pgflow.step_tasks t
  set status = 'failed', failed_at = now(), output = p_output,
      error_message = '[TYPE_VIOLATION] Produced ' || v_type || ' instead of array'
  where t.run_id = p_task.run_id and t.step_slug = p_task.step_slug
    and t.task_index = p_task.task_index
  returning * into v_task;
  perform pgflow._fail_run(p_run.run_id, null);
  update pgflow.step_states ss
  set status = 'failed', failed_at = now(),
      error_message = '[TYPE_VIOLATION] Map step ' || p_map_step
        || ' expects array input but dependency ' || p_task.step_slug || ' produced ' || v_type
  where ss.run_id = p_run.run_id and ss.step_slug = p_task.step_slug
  returning * into v_state;
  perform pgflow._emit_step_event(v_state);
  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return v_task;
end;
$$;

-- ---- sql/schema/functions/claims/_refuse_claim_batch.sql
-- The fatal outcome of a claim: every message of the batch is made visible again, the worker's
-- function is paused (pgflow.worker_functions; resume_worker_function lifts it), and one row per
-- message is returned: `fatal` with the reason for each unsupported message, `reset` for the
-- others. Nothing is claimed or archived, and nothing is raised, so the reset and the pause
-- commit with the claim's transaction.
-- Locks: the queue rows of the batch; the worker_functions row.
-- Called by: claim_tasks.
create or replace function pgflow._refuse_claim_batch(p_queue_name text, p_function_name text,
                                                      p_items pgflow._claim_item[])
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = ''
as $$
begin
  perform pgflow.set_vt_batch(p_queue_name, array(select c.msg_id from unnest(p_items) c order by c.msg_id),
                              array_fill(0, array[cardinality(p_items)]));
  update pgflow.worker_functions w
  set paused_at = clock_timestamp(),
      pause_reason = format('fatal claim on queue "%s": unsupported message(s) %s', p_queue_name,
        (select string_agg(c.msg_id::text, ', ' order by c.msg_id)
         from unnest(p_items) c where c.class = 'fatal')),
      updated_at = clock_timestamp()
  where w.function_name = p_function_name;
  return query
  select case when c.class = 'fatal' then 'fatal' else 'reset' end, p_queue_name, c.msg_id,
         null::text, null::uuid, null::text, null::int, null::int, null::jsonb, null::jsonb,
         c.reason, null::int
  from unnest(p_items) c order by c.msg_id;
end;
$$;

-- ---- sql/schema/functions/runtime/cascade_complete_taskless_steps.sql
-- Completes ready steps that have no tasks (maps over empty arrays), wave after wave, and
-- releases their dependents. Returns how many steps it completed. Each wave completes at
-- least one step, so the loop ends after at most as many waves as the flow has steps.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_complete_taskless_steps(run_id uuid) returns int
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_slugs text[];
  v_total int := 0;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_complete_taskless_steps.run_id;
    exit when not found or v_run.status <> 'started';

    select array_agg(ss.step_slug order by s.step_index) into v_slugs
    from pgflow.step_states ss
    join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
    where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
      and ss.initial_tasks = 0
      -- A step whose condition is unmet is left to cascade_resolve_conditions, which
      -- _advance_run runs again after every call that completed something.
      and ((s.required_input_pattern is null and s.forbidden_input_pattern is null)
           or (select (s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                      and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern)
               from (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                    s.deps_count) as value) ci));
    exit when v_slugs is null;

    update pgflow.step_states ss
    set status = 'completed', started_at = now(), completed_at = now(), remaining_tasks = 0,
        output = case when s.step_type = 'map' then '[]'::jsonb end
    from pgflow.steps s
    where ss.run_id = v_run.run_id and ss.step_slug = any(v_slugs)
      and s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug;

    perform pgflow._emit_step_events(v_run.run_id, v_slugs);

    -- An empty map's dependent map maps over that empty array: zero tasks as well.
    perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_slugs, 0, true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_slugs)
    where r.run_id = v_run.run_id;
    v_total := v_total + cardinality(v_slugs);
  end loop;
  return v_total;
end;
$$;

-- ---- sql/schema/functions/runtime/cascade_resolve_conditions.sql
-- Evaluates the conditions of every step that just became ready, until nothing changes:
-- `fail` fails the step and the run, `skip` skips the step (its dependents run without it),
-- `skip-cascade` skips it and everything downstream. Returns false when a `fail` condition
-- failed the run, true otherwise.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.cascade_resolve_conditions(run_id uuid) returns boolean
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_failing text[];
  v_skipped text[];
  v_cascading text[];
  v_cascaded int;
  v_state pgflow.step_states;
begin
  loop
    select * into v_run from pgflow.runs r where r.run_id = cascade_resolve_conditions.run_id;
    if not found or v_run.status <> 'started' then
      return coalesce(v_run.status <> 'failed', true);
    end if;

    -- Unmet conditions among ready steps, by mode, in step order.
    select array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'fail'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip'),
           array_agg(x.step_slug order by x.step_index) filter (where x.when_unmet = 'skip-cascade')
    into v_failing, v_skipped, v_cascading
    from (
      select ss.step_slug, s.when_unmet, s.step_index
      from pgflow.step_states ss
      join pgflow.steps s on s.flow_slug = ss.flow_slug and s.step_slug = ss.step_slug
      cross join lateral (select pgflow._condition_input(ss.run_id, ss.flow_slug, ss.step_slug,
                                                         s.deps_count) as value) ci
      where ss.run_id = v_run.run_id and ss.status = 'created' and ss.remaining_deps = 0
        and (s.required_input_pattern is not null or s.forbidden_input_pattern is not null)
        and not ((s.required_input_pattern is null or ci.value @> s.required_input_pattern)
                 and (s.forbidden_input_pattern is null or not ci.value @> s.forbidden_input_pattern))
    ) x;

    -- 1. `fail`: the first such step fails, and the run with it.
    if v_failing is not null then
      update pgflow.step_states ss
      set status = 'failed', failed_at = now(), error_message = 'Condition not met'
      where ss.run_id = v_run.run_id and ss.step_slug = v_failing[1]
      returning * into v_state;
      perform pgflow._emit_step_event(v_state);
      perform pgflow._fail_run(v_run.run_id, 'Condition not met');
      return false;
    end if;

    -- 2. `skip`: the steps are skipped; their dependents run without them.
    if v_skipped is not null then
      update pgflow.step_states ss
      set status = 'skipped', skip_reason = 'condition_unmet', skipped_at = now()
      where ss.run_id = v_run.run_id and ss.step_slug = any(v_skipped);
      perform pgflow._emit_step_events(v_run.run_id, v_skipped);
      -- A map whose only dependency was skipped has nothing to map over: zero tasks.
      perform pgflow._release_children(v_run.run_id, v_run.flow_slug, v_skipped, 0, true);
      update pgflow.runs r set remaining_steps = r.remaining_steps - cardinality(v_skipped)
      where r.run_id = v_run.run_id;
    end if;

    -- 3. `skip-cascade`: the steps and everything downstream are skipped.
    v_cascaded := 0;
    for i in 1 .. coalesce(cardinality(v_cascading), 0) loop
      v_cascaded := v_cascaded + pgflow._cascade_force_skip_steps(v_run.run_id, v_cascading[i],
                                                                   'condition_unmet');
    end loop;

    exit when v_skipped is null and v_cascaded = 0;
  end loop;
  return true;
end;
$$;

-- ---- sql/schema/functions/claims/claim_tasks.sql
-- The queue-aware claim boundary: claims a batch of messages a worker read from `queue_name`
-- for `flow_slug`, one pgflow.claim_record per message.
--
-- The worker's subscription (registered worker, queue on the flow's route) is validated
-- first; then every message is looked up by (queue_name, message_id) and the complete batch is
-- classified before anything changes. Without a fatal message, one transaction claims the
-- eligible tasks (visible again after the step's effective timeout + 2 s), defers running ones,
-- and archives finished or clearly foreign messages. With any fatal message - pgflow-shaped
-- work whose task is missing or on another route - nothing is claimed or archived: the whole
-- batch is made visible again, the worker's function is paused (pgflow.worker_functions), and
-- the fatal outcome is returned (not raised, so the reset and the pause commit). A message is
-- "clearly foreign" only when its body carries none of pgflow's address keys (flow_slug,
-- run_id, step_slug, task_index); anything else without a matching task is fatal.
-- Applications must not send messages to pgflow-owned queues.
--
-- Steps: 1. the subscription; 2. classify the batch (_classify_claim_batch); 3a. a fatal batch:
-- reset, pause, report (_refuse_claim_batch); 3b. claim, 3c. defer, 3d. archive; 4. one row per
-- message.
-- Locks: runs FOR SHARE (run_id order) -> task rows -> queue rows.
-- Called by: workers (one round trip with pgmq.read), start_tasks.
create or replace function pgflow.claim_tasks(queue_name text, flow_slug text, msg_ids bigint[], worker_id uuid)
returns setof pgflow.claim_record
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_queue text := lower(claim_tasks.queue_name);
  v_worker pgflow.workers;
  v_ids bigint[] := array(select distinct i from unnest(msg_ids) i where i is not null order by i);
  v_items pgflow._claim_item[];
  v_claim bigint[];
  v_defer bigint[];
  v_defer_offsets int[];
  v_archive bigint[];
  v_visible int;
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

  -- 2. The complete batch, classified before anything changes (locks the runs behind it).
  v_items := pgflow._classify_claim_batch(v_queue, claim_tasks.flow_slug, v_ids);

  -- 3a. A fatal batch: nothing is claimed or archived.
  if exists (select 1 from unnest(v_items) c where c.class = 'fatal') then
    return query select * from pgflow._refuse_claim_batch(v_queue, v_worker.function_name, v_items);
    return;
  end if;

  -- 3b. Claim the eligible tasks (only rows this call changes are the worker's).
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

  -- 3c. Defer running tasks to their recovery deadline (not a fresh timeout per read).
  select array_agg(c.msg_id order by c.msg_id),
         array_agg(greatest(ceil(extract(epoch from c.deadline - clock_timestamp()))::int, 5)
                   order by c.msg_id)
  into v_defer, v_defer_offsets
  from unnest(v_items) c where c.class = 'defer';
  if v_defer is not null then
    perform pgflow.set_vt_batch(v_queue, v_defer, v_defer_offsets);
  end if;

  -- 3d. Archive messages of finished tasks and clearly foreign messages.
  select array_agg(c.msg_id order by c.msg_id) into v_archive
  from unnest(v_items) c where c.class = 'archive';
  if v_archive is not null then
    perform pgmq.archive(v_queue, v_archive);
  end if;

  -- 4. One row per message; claimed tasks carry their input (see pgflow.step_task_record).
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

-- ---- sql/schema/functions/runtime/complete_task.sql
-- Reports a task's result. Only a started task of a started step of a started run completes;
-- anything else changes nothing (a late callback's message is archived). The last task of a
-- step completes the step (a map's output is every task output in task_index order), releases
-- its dependents and advances the run. A single step feeding a map whose size is still
-- unknown must produce an array, or the run fails with [TYPE_VIOLATION].
-- Locks: run FOR UPDATE -> step state FOR UPDATE -> task FOR UPDATE -> messages last.
-- Called by: workers (the reporter); SQL users. Calls _fail_type_violation (off the hot path).
create or replace function pgflow.complete_task(run_id uuid, step_slug text, task_index int, output jsonb)
returns setof pgflow.step_tasks
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_state pgflow.step_states;
  v_task pgflow.step_tasks;
  v_step pgflow.steps;
  v_child text;
  v_output jsonb;
begin
  -- Lock order: run, step state, task; their messages last.
  select * into v_run from pgflow.runs r where r.run_id = complete_task.run_id for update;
  if not found then
    return;
  end if;
  select * into v_state from pgflow.step_states ss
  where ss.run_id = complete_task.run_id and ss.step_slug = complete_task.step_slug for update;
  select * into v_task from pgflow.step_tasks t
  where t.run_id = complete_task.run_id and t.step_slug = complete_task.step_slug
    and t.task_index = complete_task.task_index
  for update;
  if not found then
    return;
  end if;

  -- Late callbacks: the run or the step already ended (the task was cancelled or skipped,
  -- which are terminal), so nothing changes; the message can go.
  if v_run.status <> 'started' or v_state.status <> 'started' then
    perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
    return next v_task;
    return;
  end if;
  -- Only a started task completes; queued, completed or failed tasks stay as they are.
  if v_task.status <> 'started' then
    return next v_task;
    return;
  end if;

  select * into v_step from pgflow.steps s
  where s.flow_slug = v_run.flow_slug and s.step_slug = complete_task.step_slug;

  -- A single step feeding a map whose size is still unknown must produce an array (checked
  -- only for outputs that are not arrays: an array is always fine).
  if v_step.step_type = 'single'
     and (complete_task.output is null or jsonb_typeof(complete_task.output) <> 'array') then
    select c.step_slug into v_child
    from pgflow.deps d
    join pgflow.steps cs on cs.flow_slug = d.flow_slug and cs.step_slug = d.step_slug
    join pgflow.step_states c on c.run_id = v_run.run_id and c.step_slug = d.step_slug
    where d.flow_slug = v_run.flow_slug and d.dep_slug = complete_task.step_slug
      and cs.step_type = 'map' and c.status = 'created' and c.initial_tasks is null
    order by cs.step_index
    limit 1;
    if v_child is not null then
      return next pgflow._fail_type_violation(v_run, v_task, v_child, complete_task.output);
      return;
    end if;
  end if;

  update pgflow.step_tasks t
  set status = 'completed', completed_at = now(), output = complete_task.output
  where t.run_id = v_task.run_id and t.step_slug = v_task.step_slug
    and t.task_index = v_task.task_index
  returning * into v_task;

  if v_state.remaining_tasks > 1 then
    update pgflow.step_states ss set remaining_tasks = ss.remaining_tasks - 1
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug;
  else
    -- The last task (the step state is locked, so no sibling can finish in between): the
    -- step is done. A map's output is every task output in task_index order.
    v_output := case when v_step.step_type = 'map'
      then (select coalesce(jsonb_agg(t.output order by t.task_index), '[]'::jsonb)
            from pgflow.step_tasks t
            where t.run_id = v_run.run_id and t.step_slug = complete_task.step_slug
              and t.status = 'completed')
      else complete_task.output end;
    update pgflow.step_states ss
    set remaining_tasks = 0, status = 'completed', completed_at = now(), output = v_output
    where ss.run_id = v_run.run_id and ss.step_slug = complete_task.step_slug
    returning * into v_state;
    perform pgflow._release_children(
      v_run.run_id, v_run.flow_slug, array[complete_task.step_slug],
      case when jsonb_typeof(v_output) = 'array' then jsonb_array_length(v_output) end,
      true);
    update pgflow.runs r set remaining_steps = r.remaining_steps - 1 where r.run_id = v_run.run_id;
    perform pgflow._emit_step_event(v_state);
    perform pgflow._advance_run(v_run.run_id);
  end if;

  perform pgflow._archive_task_message(v_task.run_id, v_task.step_slug, v_task.task_index);
  return next v_task;
end;
$$;

-- ---- sql/schema/functions/runtime/maybe_complete_run.sql
-- Completes the run when no step is left: output = {leaf_slug: output} of completed leaf steps
-- (NULL when none completed). Only a started run can complete.
-- Locks: the caller holds the run.
-- Called by: _advance_run.
create or replace function pgflow.maybe_complete_run(run_id uuid) returns void
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
begin
  update pgflow.runs r
  set status = 'completed', completed_at = now(),
      output = (
        select jsonb_object_agg(ss.step_slug, ss.output)
        from pgflow.step_states ss
        where ss.run_id = r.run_id and ss.status = 'completed'
          and not exists (select 1 from pgflow.deps d
                          where d.flow_slug = ss.flow_slug and d.dep_slug = ss.step_slug))
  where r.run_id = maybe_complete_run.run_id and r.status = 'started' and r.remaining_steps = 0
  returning * into v_run;
  if found then
    perform pgflow._emit_run_event(v_run);
  end if;
end;
$$;

-- ---- sql/schema/functions/runtime/start_flow.sql
-- Starts a run: checks the input (a flow with a root map needs an array), creates the run and
-- one step state per step, publishes run:started, then advances the run (conditions, taskless
-- steps, ready steps get their tasks and messages; a run without tasks completes at once).
-- Locks: the new run's rows only (nobody else can see them before commit); queue rows last.
-- Called by: clients (Client::start_flow), start_flow_with_states; SQL users.
create or replace function pgflow.start_flow(flow_slug text, input jsonb, run_id uuid default null)
returns setof pgflow.runs
language plpgsql volatile
set search_path = ''
as $$
#variable_conflict use_column
declare
  v_run pgflow.runs;
  v_has_root_map boolean;
begin
  if not exists (select 1 from pgflow.flows f where f.flow_slug = start_flow.flow_slug) then
    raise exception 'Flow "%" does not exist', start_flow.flow_slug using errcode = 'no_data_found';
  end if;
  select exists (select 1 from pgflow.steps s
                 where s.flow_slug = start_flow.flow_slug and s.step_type = 'map' and s.deps_count = 0)
  into v_has_root_map;
  if v_has_root_map and start_flow.input is null then
    raise exception 'Flow % has root map steps but input is NULL', start_flow.flow_slug;
  elsif v_has_root_map and jsonb_typeof(start_flow.input) <> 'array' then
    raise exception 'Flow % has root map steps but input is not an array (got %)',
      start_flow.flow_slug, jsonb_typeof(start_flow.input);
  elsif start_flow.input is null then
    raise exception 'start_flow(): input must not be SQL NULL (pass ''null''::jsonb for a JSON null)'
      using errcode = 'null_value_not_allowed';
  end if;

  insert into pgflow.runs (run_id, flow_slug, input, remaining_steps)
  values (coalesce(start_flow.run_id, gen_random_uuid()), start_flow.flow_slug, start_flow.input,
          (select count(*) from pgflow.steps s where s.flow_slug = start_flow.flow_slug))
  returning * into v_run;

  insert into pgflow.step_states (flow_slug, run_id, step_slug, remaining_deps, initial_tasks)
  select s.flow_slug, v_run.run_id, s.step_slug, s.deps_count,
         -- (the inner CASE keeps constant folding from evaluating the length of a non-array)
         case when s.step_type = 'map' and s.deps_count = 0
                then jsonb_array_length(case when jsonb_typeof(v_run.input) = 'array' then v_run.input end)
              when s.step_type = 'map' then null
              else 1 end
  from pgflow.steps s
  where s.flow_slug = v_run.flow_slug;

  perform pgflow._emit_run_event(v_run);

  perform pgflow._advance_run(v_run.run_id);
  return query select * from pgflow.runs r where r.run_id = v_run.run_id;
end;
$$;

-- ---- sql/schema/functions/runtime/start_ready_steps.sql
-- Starts every ready step with a known, positive task count: one message per task in the
-- step's queue (delayed by the step's start_delay), one queued task row per message that
-- snapshots that queue. No queue DDL happens here.
-- Locks: the caller holds the run; step states FOR UPDATE -> task rows -> queue rows.
-- Called by: _advance_run.
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
      returning ss)
    select (st.ss).*, st.ss as state, coalesce(s.opt_start_delay, 0) as start_delay, s.queue_name
    from started st
    join pgflow.steps s on s.flow_slug = (st.ss).flow_slug and s.step_slug = (st.ss).step_slug
    order by (st.ss).step_slug
  loop
    perform pgflow._emit_step_event(v_step.state);

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
