-- Checks a batch of task results for complete_tasks / fail_tasks: a JSON array of objects
-- {"run_id", "step_slug", "task_index", <value_key>} with a string run_id, a string step_slug
-- and a numeric task_index. Raises 22023 naming the first malformed element (by its 1-based
-- position). Fields are read by path (#>), element by element: jsonb_array_elements would copy
-- every whole element, outputs included (a field path finds nothing in an element that is not
-- an object).
-- Called by: _task_results, complete_tasks (a batch of one result).
create or replace function pgflow._check_task_results(p_results jsonb, p_caller text, p_value_key text)
returns void
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
declare
  v_bad int;
begin
  if jsonb_typeof(p_results) is distinct from 'array' then
    raise exception '%(): results must be a JSON array of {run_id, step_slug, task_index, %}, not %',
      p_caller, p_value_key, coalesce(jsonb_typeof(p_results), 'NULL')
      using errcode = 'invalid_parameter_value';
  end if;
  select i + 1 into v_bad
  from generate_series(0, jsonb_array_length(p_results) - 1) i
  where jsonb_typeof(p_results #> array[i::text, 'run_id']) is distinct from 'string'
     or jsonb_typeof(p_results #> array[i::text, 'step_slug']) is distinct from 'string'
     or jsonb_typeof(p_results #> array[i::text, 'task_index']) is distinct from 'number'
  order by i
  limit 1;
  if v_bad is not null then
    raise exception '%(): result % is not an object with a string run_id, a string step_slug and a numeric task_index',
      p_caller, v_bad
      using errcode = 'invalid_parameter_value';
  end if;
end;
$$;
