-- Checks a whole definition before anything is written: the flow slug and every step slug
-- under the shared rules, no exact or case-only duplicate steps, dependencies on earlier steps
-- only, and a queue name PGMQ accepts. (add_step checks a map's single dependency.)
-- Locks: none.
-- Called by: _create_flow_from_shape.
create or replace function pgflow._preflight_flow_shape(p_flow_slug text, p_shape jsonb) returns void
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
