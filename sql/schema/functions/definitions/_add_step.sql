-- Adds a step routed to `queue_name`, or (NULL) to the flow's generated queue lower(flow_slug),
-- provisioned through the ownership-checked path. Calling it again for an existing step is
-- idempotent when the structure (type, dependencies, patterns, modes) is the same and an error
-- otherwise: it never adds edges to an existing step, so re-calls cannot create cycles or stale
-- deps_count. Runtime options of an existing step stay unchanged (tune them with UPDATE).
-- `wait` makes it a wait step (since 0021; _wait_problem says what is valid), whose tasks wait
-- for a signal or a sleep instead of a worker.
-- Locks: the flow's definition lock; then pgmq.meta (queue creation).
-- Called by: add_step, add_wait_step; _create_flow_from_shape (with the step's private queue
-- in queue mode `step`, which the compiler provisioned).
create or replace function pgflow._add_step(
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
  when_exhausted text default 'fail',
  queue_name text default null,
  wait jsonb default null
) returns pgflow.steps
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_type text := coalesce(_add_step.step_type, 'single');
  v_deps text[] := array(select distinct d from unnest(coalesce(deps_slugs, '{}')) d order by d);
  v_existing pgflow.steps;
  v_existing_deps text[];
  v_problem text := pgflow._slug_problem(_add_step.step_slug);
  v_wait_problem text := case when _add_step.wait is not null
                              then pgflow._wait_problem(_add_step.wait, coalesce(_add_step.step_type, 'single')) end;
  v_other text;
  v_queue text;
  v_step pgflow.steps;
begin
  if v_type = 'map' and cardinality(v_deps) > 1 then
    raise exception 'Map step "%" can have at most one dependency, but % were provided: %',
      _add_step.step_slug, cardinality(v_deps), array_to_string(v_deps, ', ');
  end if;

  if v_wait_problem is not null then
    raise exception 'Invalid wait of step "%" in flow "%": its wait %', _add_step.step_slug,
      _add_step.flow_slug, v_wait_problem
      using errcode = 'check_violation', constraint = 'wait_is_valid',
            hint = 'docs/waiting.md lists the waits: {"kind": "signal"} with an optional "timeout" and "timeoutOutput", {"kind": "sleep"} with "seconds" or "until".';
  end if;
  perform pgflow._lock_flow_definition(_add_step.flow_slug);
  if not exists (select 1 from pgflow.flows f where f.flow_slug = _add_step.flow_slug) then
    raise exception 'Flow "%" does not exist; create it with pgflow.create_flow() first',
      _add_step.flow_slug using errcode = 'foreign_key_violation', constraint = 'steps_flow_slug_fkey';
  end if;

  select * into v_existing from pgflow.steps s
  where s.flow_slug = _add_step.flow_slug and s.step_slug = _add_step.step_slug;
  if found then
    v_existing_deps := array(
      select d.dep_slug from pgflow.deps d
      where d.flow_slug = _add_step.flow_slug and d.step_slug = _add_step.step_slug
      order by d.dep_slug);
    if v_existing.step_type is distinct from v_type
       or v_existing_deps is distinct from v_deps
       or v_existing.required_input_pattern is distinct from _add_step.required_input_pattern
       or v_existing.forbidden_input_pattern is distinct from _add_step.forbidden_input_pattern
       or v_existing.when_unmet is distinct from _add_step.when_unmet
       or v_existing.when_exhausted is distinct from _add_step.when_exhausted
       or v_existing.wait is distinct from _add_step.wait then
      raise exception 'Step "%" already exists in flow "%" with a different definition; '
        'flow definitions are immutable: create a new flow slug (e.g. a version suffix)',
        _add_step.step_slug, _add_step.flow_slug
        using errcode = 'unique_violation';
    end if;
    return v_existing;
  end if;

  if v_problem is not null then
    raise exception 'Invalid step slug "%" in flow "%": it %', _add_step.step_slug,
      _add_step.flow_slug, v_problem using errcode = 'check_violation', constraint = 'steps_step_slug_check';
  end if;
  select s.step_slug into v_other from pgflow.steps s
  where s.flow_slug = _add_step.flow_slug and lower(s.step_slug) = lower(_add_step.step_slug);
  if found then
    raise exception 'Step slug "%" differs only in case from step "%" of flow "%"; step slugs must be unique ignoring case',
      _add_step.step_slug, v_other, _add_step.flow_slug using errcode = 'unique_violation';
  end if;

  -- A given queue is the compiler's (already provisioned); otherwise the flow's generated queue.
  v_queue := coalesce(_add_step.queue_name, pgflow._provision_flow_queue(_add_step.flow_slug));

  insert into pgflow.steps (
    flow_slug, step_slug, step_type, step_index, deps_count,
    opt_max_attempts, opt_base_delay, opt_timeout, opt_start_delay,
    required_input_pattern, forbidden_input_pattern, when_unmet, when_exhausted, queue_name, wait)
  values (
    _add_step.flow_slug, _add_step.step_slug, v_type,
    (select coalesce(max(s.step_index) + 1, 0) from pgflow.steps s
     where s.flow_slug = _add_step.flow_slug),
    cardinality(v_deps),
    max_attempts, base_delay, timeout, start_delay,
    _add_step.required_input_pattern, _add_step.forbidden_input_pattern,
    _add_step.when_unmet, _add_step.when_exhausted, v_queue, _add_step.wait)
  returning * into v_step;

  insert into pgflow.deps (flow_slug, dep_slug, step_slug)
  select _add_step.flow_slug, d, _add_step.step_slug from unnest(v_deps) d;

  return v_step;
end;
$$;
