-- A worker's flow-control options, checked against its shape and returned in the one spelling
-- they are stored and compared in, with only what is set ('{}' for none; NULL is none):
--   {"concurrencyLimit"?: n, "concurrencyKey"?: key,
--    "steps"?: {slug: {"concurrencyLimit"?: n, "concurrencyKey"?: key}}}
-- where key is {"path": [text, ...], "limit"?: n, "weightPath"?: [text, ...]} (since 0019).
-- A limit is a whole number from 1 to 2147483647; a path a non-empty array of non-empty
-- texts. A key shares a limit, so it needs one: a step's key its own limit or the flow's, the
-- flow's key the flow's limit or a step's. Raises invalid_parameter_value naming the offending
-- option, step or flow.
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
  v_step jsonb;
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
    elsif v_key = 'concurrencyKey' then
      if v_value <> 'null'::jsonb then
        v_out := v_out || jsonb_build_object('concurrencyKey',
                                             pgflow._checked_concurrency_key(v_value, format('flow "%s"', p_flow_slug)));
      end if;
    elsif v_key = 'steps' then
      if jsonb_typeof(v_value) <> 'object' then
        raise exception 'Invalid flow control for flow "%": "steps" must be an object keyed by step slug', p_flow_slug
          using errcode = 'invalid_parameter_value';
      end if;
    else
      raise exception 'Invalid flow control for flow "%": unknown option "%" (expected "concurrencyLimit", "concurrencyKey" or "steps")',
        p_flow_slug, v_key using errcode = 'invalid_parameter_value';
    end if;
  end loop;

  for v_key, v_value in select * from jsonb_each(coalesce(p_flow_control->'steps', '{}')) loop
    if not exists (select 1 from jsonb_array_elements(p_shape->'steps') s where s->>'slug' = v_key) then
      raise exception 'Invalid flow control for flow "%": step "%" is not in the flow', p_flow_slug, v_key
        using errcode = 'invalid_parameter_value';
    end if;
    if jsonb_typeof(v_value) <> 'object'
       or exists (select 1 from jsonb_object_keys(v_value) k where k not in ('concurrencyLimit', 'concurrencyKey')) then
      raise exception 'Invalid flow control for step "%" of flow "%": expected {"concurrencyLimit": n, "concurrencyKey": {...}}', v_key, p_flow_slug
        using errcode = 'invalid_parameter_value';
    end if;
    v_step := '{}';
    if coalesce(v_value->'concurrencyLimit', 'null'::jsonb) <> 'null'::jsonb then
      v_step := jsonb_build_object('concurrencyLimit',
        pgflow._checked_concurrency_limit(v_value->'concurrencyLimit', format('step "%s" of flow "%s"', v_key, p_flow_slug)));
    end if;
    if coalesce(v_value->'concurrencyKey', 'null'::jsonb) <> 'null'::jsonb then
      if not (v_step ? 'concurrencyLimit' or v_out ? 'concurrencyLimit') then
        raise exception 'Invalid flow control for step "%" of flow "%": a concurrency key shares a concurrency limit, and neither the step nor the flow has one',
          v_key, p_flow_slug using errcode = 'invalid_parameter_value';
      end if;
      v_step := v_step || jsonb_build_object('concurrencyKey',
        pgflow._checked_concurrency_key(v_value->'concurrencyKey', format('step "%s" of flow "%s"', v_key, p_flow_slug)));
    end if;
    if v_step <> '{}' then
      v_steps := v_steps || jsonb_build_object(v_key, v_step);
    end if;
  end loop;
  if v_out ? 'concurrencyKey' and not v_out ? 'concurrencyLimit'
     and not exists (select 1 from jsonb_each(v_steps) s where s.value ? 'concurrencyLimit') then
    raise exception 'Invalid flow control for flow "%": a concurrency key shares a concurrency limit, and neither the flow nor any of its steps has one',
      p_flow_slug using errcode = 'invalid_parameter_value';
  end if;
  if v_steps <> '{}' then
    v_out := v_out || jsonb_build_object('steps', v_steps);
  end if;
  return v_out;
end;
$$;

-- A concurrency limit as an int, or invalid_parameter_value naming `p_owner`.
-- Called by: _normalize_flow_control, _checked_concurrency_key.
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

-- A concurrency key in its stored spelling {"path": [...], "limit"?: n, "weightPath"?: [...]},
-- or invalid_parameter_value naming `p_owner` and the offending part (since 0019).
-- Called by: _normalize_flow_control.
create or replace function pgflow._checked_concurrency_key(p_value jsonb, p_owner text)
returns jsonb
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_out jsonb;
  v_name text;
begin
  if jsonb_typeof(p_value) <> 'object'
     or exists (select 1 from jsonb_object_keys(p_value) k where k not in ('path', 'limit', 'weightPath')) then
    raise exception 'Invalid concurrency key for %: expected {"path": ["field", ...], "limit"?: n, "weightPath"?: ["field", ...]}', p_owner
      using errcode = 'invalid_parameter_value';
  end if;
  foreach v_name in array array['path', 'weightPath'] loop
    if (v_name = 'path' or coalesce(p_value->v_name, 'null'::jsonb) <> 'null'::jsonb)
       and not (jsonb_typeof(p_value->v_name) = 'array' and jsonb_array_length(p_value->v_name) > 0
                and not exists (select 1 from jsonb_array_elements(p_value->v_name) e
                                where jsonb_typeof(e) <> 'string' or e #>> '{}' = '')) then
      raise exception 'Invalid concurrency key % % for %: expected a path into the run input, a non-empty array of field names such as ["tenant"]',
        v_name, coalesce(p_value->v_name, 'null'::jsonb), p_owner using errcode = 'invalid_parameter_value';
    end if;
  end loop;
  v_out := jsonb_build_object('path', p_value->'path');
  if coalesce(p_value->'limit', 'null'::jsonb) <> 'null'::jsonb then
    v_out := v_out || jsonb_build_object('limit',
                                         pgflow._checked_concurrency_limit(p_value->'limit', 'the key of ' || p_owner));
  end if;
  if coalesce(p_value->'weightPath', 'null'::jsonb) <> 'null'::jsonb then
    v_out := v_out || jsonb_build_object('weightPath', p_value->'weightPath');
  end if;
  return v_out;
end;
$$;
