-- Reads a batch of task results for complete_tasks / fail_tasks: a JSON array of objects
-- {"run_id", "step_slug", "task_index", <value_key>}. Returns them in the order they are
-- applied, (run_id, step_slug, task_index, position in the batch), with `value` the value of
-- `value_key` as jsonb (JSON null stays JSON null; a missing key is SQL NULL). Raises 22023
-- naming the first malformed element (by its 1-based position) and changes nothing
-- (_check_task_results). Fields are read by path, not by copying whole elements.
-- Called by: complete_tasks, fail_tasks.
create or replace function pgflow._task_results(p_results jsonb, p_caller text, p_value_key text)
returns table (run_id uuid, step_slug text, task_index int, value jsonb, pos bigint)
language plpgsql stable
set search_path = pg_catalog, pg_temp
as $$
begin
  perform pgflow._check_task_results(p_results, p_caller, p_value_key);
  return query
  select (p_results #>> array[i::text, 'run_id'])::uuid, p_results #>> array[i::text, 'step_slug'],
         (p_results #>> array[i::text, 'task_index'])::int, p_results #> array[i::text, p_value_key],
         i + 1::bigint
  from generate_series(0, jsonb_array_length(p_results) - 1) i
  order by 1, 2, 3, 5;
end;
$$;
