-- Checks a whole definition before anything is written: the flow slug and every step slug
-- under the shared rules, no exact or case-only duplicate steps, dependencies on earlier steps
-- only, and queue names PGMQ accepts: the flow's generated queue, and in queue mode `step` a
-- private queue for every step (a flow with no steps cannot use step queues).
-- (add_step checks a map's single dependency.)
-- Locks: none.
-- Called by: _create_flow_from_shape.
create or replace function pgflow._preflight_flow_shape(p_flow_slug text, p_shape jsonb, p_queue_mode text)
returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_problem text := pgflow._slug_problem(p_flow_slug);
  v_seen text[] := '{}';
  v_step jsonb;
  v_slug text;
  v_index int;
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
  if p_queue_mode not in ('flow', 'step') or p_queue_mode is null then
    raise exception 'Invalid queue mode "%" for flow "%": expected "flow" or "step"', p_queue_mode, p_flow_slug
      using errcode = 'invalid_parameter_value';
  end if;
  if p_queue_mode = 'step' then
    if jsonb_array_length(p_shape->'steps') = 0 then
      raise exception 'Flow "%" has no steps, so it cannot use step queues (queue mode step needs at least one step)',
        p_flow_slug using errcode = 'invalid_parameter_value';
    end if;
    select r.step_slug, r.step_index into v_slug, v_index
    from pgflow._flow_route(p_flow_slug, p_shape, 'step') r
    where r.queue_name is null order by r.step_index limit 1;
    if found then
      raise exception 'Flow "%" cannot use step queues: the private queue of step "%" (index %) would be "%" or "%", longer than PGMQ''s 47 characters either way; shorten the flow slug',
        p_flow_slug, v_slug, v_index, lower(p_flow_slug || '__' || v_slug), lower(p_flow_slug || '__' || v_index)
        using errcode = 'name_too_long';
    end if;
  end if;
end;
$$;
