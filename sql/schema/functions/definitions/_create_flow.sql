-- Creates only the flow definition (no queue: the compiler and add_step provision it), as a
-- member of alias `flow_alias` (NULL: the flow's own slug, a self-alias). The first member of
-- an alias becomes its active version. Idempotent for an existing flow (options unchanged); a
-- different alias for it is an error (membership is immutable). Rejects invalid and too long
-- slugs, case-only duplicates of another flow or alias, and a slug whose queue name PGMQ
-- already has.
-- Locks: the alias lock, then the flow's definition lock.
-- Called by: create_flow, _create_flow_from_shape.
create or replace function pgflow._create_flow(
  flow_slug text,
  max_attempts int default null,
  base_delay int default null,
  timeout int default null,
  flow_alias text default null
) returns pgflow.flows
language plpgsql volatile
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_flow pgflow.flows;
  v_problem text := pgflow._slug_problem(_create_flow.flow_slug);
  v_alias text := coalesce(_create_flow.flow_alias, _create_flow.flow_slug);
  v_other text;
begin
  -- Lock order: the alias, then the concrete flow. An existing flow's alias is immutable, so it
  -- can be read before its lock.
  select f.flow_alias into v_other from pgflow.flows f where f.flow_slug = _create_flow.flow_slug;
  perform pgflow._lock_flow_alias(coalesce(v_other, v_alias));
  perform pgflow._lock_flow_definition(_create_flow.flow_slug);
  select * into v_flow from pgflow.flows f where f.flow_slug = _create_flow.flow_slug;
  if found then
    if _create_flow.flow_alias is not null and v_flow.flow_alias <> _create_flow.flow_alias then
      raise exception 'Flow "%" belongs to alias "%"; it cannot move to alias "%" (alias membership is immutable: deploy a new flow slug under that alias)',
        v_flow.flow_slug, v_flow.flow_alias, _create_flow.flow_alias
        using errcode = 'object_not_in_prerequisite_state';
    end if;
    return v_flow;
  end if;

  if v_problem is not null then
    raise exception 'Invalid flow slug "%": it %', _create_flow.flow_slug, v_problem
      using errcode = 'check_violation', constraint = 'slug_is_valid';
  end if;
  if length(_create_flow.flow_slug) > 47 then
    raise exception 'Flow slug "%" is too long: its queue name must be at most 47 characters',
      _create_flow.flow_slug using errcode = 'check_violation', constraint = 'flow_slug_fits_queue_name';
  end if;
  select f.flow_slug into v_other from pgflow.flows f
  where lower(f.flow_slug) = lower(_create_flow.flow_slug);
  if found then
    raise exception 'Flow slug "%" differs only in case from existing flow "%"; flow slugs must be unique ignoring case',
      _create_flow.flow_slug, v_other using errcode = 'unique_violation';
  end if;
  select m.queue_name into v_other from pgmq.meta m
  where lower(m.queue_name) = lower(_create_flow.flow_slug);
  if found then
    raise exception 'PGMQ queue "%" already exists; pgflow never adopts an existing queue for a new flow "%". Drop or rename that queue, or use another flow slug',
      v_other, _create_flow.flow_slug using errcode = 'duplicate_object';
  end if;

  v_problem := pgflow._slug_problem(v_alias);
  if v_problem is not null then
    raise exception 'Invalid flow alias "%": it %', v_alias, v_problem
      using errcode = 'check_violation', constraint = 'flow_alias_is_valid';
  end if;
  select a.flow_alias into v_other from pgflow.flow_aliases a
  where lower(a.flow_alias) = lower(v_alias) and a.flow_alias <> v_alias;
  if found then
    raise exception 'Flow alias "%" differs only in case from existing alias "%"; aliases must be unique ignoring case',
      v_alias, v_other using errcode = 'unique_violation';
  end if;

  insert into pgflow.flows (flow_slug, opt_max_attempts, opt_base_delay, opt_timeout, flow_alias)
  values (_create_flow.flow_slug, coalesce(max_attempts, 3), coalesce(base_delay, 5),
          coalesce(timeout, 60), v_alias)
  returning * into v_flow;
  -- The first member of an alias becomes its active version; later members stay inactive
  -- until activate_flow_version.
  insert into pgflow.flow_aliases (flow_alias, flow_slug) values (v_alias, v_flow.flow_slug)
  on conflict (flow_alias) do nothing;
  return v_flow;
end;
$$;
