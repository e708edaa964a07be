-- A worker's flow-control options, checked against its shape and returned in the one spelling
-- they are stored and compared in: {"concurrencyLimit"?: n, "steps"?: {slug: {"concurrencyLimit": n}}}
-- with only the limits that are set ('{}' for none; NULL is none). A limit is a whole number
-- from 1 to 2147483647. Raises invalid_parameter_value naming the offending key or step.
-- Called by: ensure_flow_compiled.
create or replace function pgflow._normalize_flow_control(p_flow_slug text, p_shape jsonb,
                                                          p_flow_control jsonb)
returns jsonb
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_out jsonb := '{}';
  v_steps jsonb := '{}';
  v_key text;
  v_value jsonb;
begin
  if p_flow_control is null or p_flow_control = 'null'::jsonb then
    return '{}';
  end if;
  if jsonb_typeof(p_flow_control) <> 'object' then
    raise exception 'Invalid flow control for flow "%": expected a JSON object, got %', p_flow_slug,
      jsonb_typeof(p_flow_control) using errcode = 'invalid_parameter_value';
  end if;
  for v_key, v_value in select * from jsonb_each(p_flow_control) loop
    if v_key = 'concurrencyLimit' then
      if v_value <> 'null'::jsonb then
        v_out := v_out || jsonb_build_object('concurrencyLimit',
                                             pgflow._checked_concurrency_limit(v_value, format('flow "%s"', p_flow_slug)));
      end if;
    elsif v_key = 'steps' then
      if jsonb_typeof(v_value) <> 'object' then
        raise exception 'Invalid flow control for flow "%": "steps" must be an object keyed by step slug', p_flow_slug
          using errcode = 'invalid_parameter_value';
      end if;
    else
      raise exception 'Invalid flow control for flow "%": unknown option "%" (expected "concurrencyLimit" or "steps")',
        p_flow_slug, v_key using errcode = 'invalid_parameter_value';
    end if;
  end loop;

  for v_key, v_value in select * from jsonb_each(coalesce(p_flow_control->'steps', '{}')) loop
    if not exists (select 1 from jsonb_array_elements(p_shape->'steps') s where s->>'slug' = v_key) then
      raise exception 'Invalid flow control for flow "%": step "%" is not in the flow', p_flow_slug, v_key
        using errcode = 'invalid_parameter_value';
    end if;
    if jsonb_typeof(v_value) <> 'object'
       or exists (select 1 from jsonb_object_keys(v_value) k where k <> 'concurrencyLimit') then
      raise exception 'Invalid flow control for step "%" of flow "%": expected {"concurrencyLimit": n}', v_key, p_flow_slug
        using errcode = 'invalid_parameter_value';
    end if;
    if coalesce(v_value->'concurrencyLimit', 'null'::jsonb) <> 'null'::jsonb then
      v_steps := v_steps || jsonb_build_object(v_key, jsonb_build_object('concurrencyLimit',
        pgflow._checked_concurrency_limit(v_value->'concurrencyLimit', format('step "%s" of flow "%s"', v_key, p_flow_slug))));
    end if;
  end loop;
  if v_steps <> '{}' then
    v_out := v_out || jsonb_build_object('steps', v_steps);
  end if;
  return v_out;
end;
$$;

-- A concurrency limit as an int, or invalid_parameter_value naming `p_owner`.
-- Called by: _normalize_flow_control.
create or replace function pgflow._checked_concurrency_limit(p_value jsonb, p_owner text)
returns int
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
begin
  if jsonb_typeof(p_value) = 'number' and (p_value::text)::numeric = trunc((p_value::text)::numeric)
     and (p_value::text)::numeric between 1 and 2147483647 then
    return (p_value::text)::int;
  end if;
  raise exception 'Invalid concurrency limit % for %: expected a whole number from 1 to 2147483647', p_value, p_owner
    using errcode = 'invalid_parameter_value';
end;
$$;
