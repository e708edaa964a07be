-- Reads a batch of task results for complete_tasks / fail_tasks: a JSON array of objects
-- {"run_id", "step_slug", "task_index", <value_key>}. Returns them in the order they are
-- applied, (run_id, step_slug, task_index, position in the batch), with `value` the value of
-- `value_key` as jsonb (JSON null stays JSON null; a missing key is SQL NULL). Raises 22023
-- naming the first malformed element (by its 1-based position) and changes nothing.
-- Called by: complete_tasks, fail_tasks.
create or replace function pgflow._task_results(p_results jsonb, p_caller text, p_value_key text)
returns table (run_id uuid, step_slug text, task_index int, value jsonb, pos bigint)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_bad record;
begin
  if jsonb_typeof(p_results) is distinct from 'array' then
    raise exception '%(): results must be a JSON array of {run_id, step_slug, task_index, %}, not %',
      p_caller, p_value_key, coalesce(jsonb_typeof(p_results), 'NULL')
      using errcode = 'invalid_parameter_value';
  end if;
  select e.pos, e.elem into v_bad
  from jsonb_array_elements(p_results) with ordinality e(elem, pos)
  where jsonb_typeof(e.elem) is distinct from 'object'
     or jsonb_typeof(e.elem->'run_id') is distinct from 'string'
     or jsonb_typeof(e.elem->'step_slug') is distinct from 'string'
     or jsonb_typeof(e.elem->'task_index') is distinct from 'number'
  order by e.pos
  limit 1;
  if found then
    raise exception '%(): result % is not an object with a string run_id, a string step_slug and a numeric task_index',
      p_caller, v_bad.pos
      using errcode = 'invalid_parameter_value';
  end if;
  return query
  select (e.elem->>'run_id')::uuid, e.elem->>'step_slug', (e.elem->>'task_index')::int,
         e.elem->p_value_key, e.pos
  from jsonb_array_elements(p_results) with ordinality e(elem, pos)
  order by 1, 2, 3, 5;
end;
$$;
