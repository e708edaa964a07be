-- Rejects a malformed shape with an error that names the problem, before anything is written.
-- A step may omit whenUnmet, whenExhausted, requiredInputPattern and forbiddenInputPattern
-- (shapes of older upstream DSL versions; _with_shape_defaults fills them in), but a value that
-- is present must have the right type. A wait step's "wait" (since 0021) must be an object
-- (_add_step checks its contents).
-- Called by: ensure_flow_compiled, _preflight_flow_shape.
create or replace function pgflow._validate_flow_shape(p_shape jsonb) returns void
language plpgsql immutable
set search_path = pg_catalog, pg_temp
as $$
#variable_conflict use_column
declare
  v_step jsonb;
  i int := 0;
begin
  if jsonb_typeof(p_shape) is distinct from 'object' or jsonb_typeof(p_shape->'steps') is distinct from 'array' then
    raise exception 'Invalid flow shape: expected an object with a "steps" array'
      using errcode = 'invalid_parameter_value';
  end if;
  if p_shape ? 'options' and jsonb_typeof(p_shape->'options') is distinct from 'object' then
    raise exception 'Invalid flow shape: "options" must be an object' using errcode = 'invalid_parameter_value';
  end if;
  for v_step in select e from jsonb_array_elements(p_shape->'steps') e loop
    if jsonb_typeof(v_step) is distinct from 'object'
       or jsonb_typeof(v_step->'slug') is distinct from 'string'
       or jsonb_typeof(v_step->'stepType') is distinct from 'string'
       or jsonb_typeof(v_step->'dependencies') is distinct from 'array'
       or coalesce(jsonb_typeof(v_step->'whenUnmet'), 'string') <> 'string'
       or coalesce(jsonb_typeof(v_step->'whenExhausted'), 'string') <> 'string'
       or coalesce(jsonb_typeof(v_step->'requiredInputPattern'), 'object') <> 'object'
       or coalesce(jsonb_typeof(v_step->'forbiddenInputPattern'), 'object') <> 'object' then
      raise exception 'Invalid flow shape: step at index % needs string "slug" and "stepType" and '
        'array "dependencies"; "whenUnmet" and "whenExhausted", when present, must be strings and '
        '"requiredInputPattern"/"forbiddenInputPattern" objects', i
        using errcode = 'invalid_parameter_value';
    end if;
    if coalesce(jsonb_typeof(v_step->'wait'), 'object') <> 'object' then
      raise exception 'Invalid flow shape: step at index % has a "wait" that is not an object', i
        using errcode = 'invalid_parameter_value';
    end if;
    i := i + 1;
  end loop;
end;
$$;
